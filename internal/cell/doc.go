// Package cell confines the processes of one embedded cluster: its etcd, its
// kube-controlplane (API server, controllers, scheduler, KWOK) and the
// operator's host process. A learner is admin of their cluster and may make
// it do anything a cluster can do — call webhook URLs, serve files as pod
// logs, provision and delete host-path volumes — so whatever those processes
// can touch is what a learner can touch. A cell keeps that to the cluster's
// own directory.
//
// A cell is a set of Linux namespaces made by bubblewrap (bwrap):
//   - a user namespace in which the processes run as an unprivileged user
//     with no capabilities and no_new_privs;
//   - a mount namespace whose root holds only the cluster's directory
//     (writable, at the same path as on the host, so every path in the
//     cluster's configuration means the same inside and out), the programs it
//     runs (read-only), a few /etc files written for it, the system's
//     libraries where a program is dynamically linked, a private /tmp (a
//     directory of the cell) and its own /proc and /dev. The data directory,
//     the store, the server's key, other clusters and home directories are
//     not there at all;
//   - a network namespace with only a loopback interface: an API server told
//     to call a webhook on 127.0.0.1:8080 reaches its own cell, not the oplab
//     server or another learner's cluster;
//   - PID, IPC and UTS namespaces of its own.
//
// What a cell holds is decided here (Spec.sandbox, host.go); how that is
// said to bwrap — its arguments, the /etc files, the probe of whether it
// works on this machine — is package bwrap's, which the web console's
// sandbox uses too.
//
// The host reaches in, never the cell out: the cell's first process
// (Init, run by "cell init") holds TCP listeners made on the host's loopback
// before the namespaces existed and passed to it, and forwards each
// connection to the same port on the cell's loopback. The API server thus
// answers on the host at the address its kubeconfig names. More ports are
// forwarded later over the cell's control socket, which passes a host
// listener as a file descriptor (Forward).
//
// Processes join a cell with nsenter (util-linux) and start through
// "cell exec", which sets their resource limits and no_new_privs before it
// executes the program (Join). They are ordinary host processes to their
// parent, so the embedded provider supervises them as before; when the cell's
// first process ends, the kernel ends every process in the cell.
package cell
