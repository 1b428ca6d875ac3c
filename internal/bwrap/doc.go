// Package bwrap is how oplab speaks to bubblewrap (bwrap), which makes the
// namespaces of its two sandboxes: a cluster's cell (package cell) and the
// web console's kubectl (package console). Each of them keeps its own
// policy — which host paths its sandbox holds, whether it has a network of
// its own, what its user is called — and states it as a Sandbox; this
// package owns what that means to bwrap:
//
//   - Sandbox.Args is bwrap's argument list: the namespaces (user, PID,
//     IPC, UTS, cgroup, and network when asked), the unprivileged UID and
//     GID, no capabilities, the binds, /proc, /dev, /tmp and /etc;
//     Sandbox.Paths are the host paths bwrap must reach for it (what "cell
//     hold" stages when bwrap runs as a user of its own);
//   - WriteEtc writes the few /etc files a sandbox is given: names for
//     loopback and for its one user, nothing of the host's;
//   - Path finds bwrap, and Probe runs a program in a sandbox to learn
//     whether bwrap can make namespaces on this machine;
//   - Mode is what a caller does where it cannot: go on unsandboxed,
//     refuse to, or never try.
//
// The walls themselves are tested where they are chosen: internal/cell's
// TestForwardAndJoin and internal/console's sandbox tests run programs
// through these arguments and look at what they can reach.
package bwrap
