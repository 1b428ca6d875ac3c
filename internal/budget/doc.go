// Package budget gives each learner's cell a share of the machine that the
// kernel enforces: a control group with a memory ceiling, a CPU weight equal
// to every other cell's and a bound on tasks.
//
// The groups hang under the group of the process that makes them (a
// delegated subtree when oplab does not run as root, as rootless container
// engines use; systemd gives one with Delegate=):
//
//	<own group>/oplab-cells          every cell of the machine; the CPU weight of one server thread
//	<own group>/oplab-cells/<cell>   one learner: memory ceiling, task bound, an equal CPU weight
//	<cell>/cluster                   the cluster's processes (etcd, kube-controlplane, the operator)
//	<cell>/console                   the web console's kubectl, under a smaller ceiling of its own
//
// The server and the grader stay in oplab's own group, so under contention
// the cells together weigh as much as one busy thread of the server's, and
// each cell gets the same share of what they have: a busy cluster slows
// only itself, and never the grader.
//
// A process joins a group from the inside: before it executes the cell's
// first program, it writes "0" (itself) to the group's cgroup.procs files,
// so every process it starts is in the group from its first
// instruction; the cell program's "enter" and "join" do it (package cell).
// The cell's processes cannot leave it: they see no /sys, run
// in a user namespace of their own with no capability, and do not own the
// group's files.
//
// Both cgroup versions are handled through containerd's cgroups library: v1
// (each controller its own hierarchy, as on this machine, where a v2 mount
// with no controller sits beside them) and v2 (one unified hierarchy).
package budget
