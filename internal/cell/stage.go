package cell

import (
	"path/filepath"
	"strconv"
	"syscall"
)

// Staging is how a program run as an unprivileged user of its own gets
// host paths bound by bwrap that the user cannot reach itself: "cell
// hold", run as root in a mount namespace of its own, stages each path at
// a number on a tmpfs over /tmp, becomes the user and executes bwrap,
// which binds the staged places (see runHold). A cell of its own user
// runs so (Spec.User), and so does the web console's kubectl when oplab
// runs as root.
type Staging struct {
	user  int
	paths []string
}

// NewStaging stages paths for user (a host uid, not 0).
func NewStaging(user int, paths ...string) *Staging {
	return &Staging{user: user, paths: paths}
}

// Source returns the place bwrap, run by the Command, names host path p
// by; p must be one of the staged paths.
func (st *Staging) Source(p string) string {
	for i, q := range st.paths {
		if q == p {
			return filepath.Join(stageRoot, strconv.Itoa(i))
		}
	}
	panic("cell: path " + p + " is not staged")
}

// Command returns how to run bwrap with args as the staging's user: the
// cell program init with "hold" arguments, and the namespaces the process
// must start in (a mount namespace of its own).
func (st *Staging) Command(init, bwrap string, args []string) (path string, argv []string, unshare uintptr) {
	out := []string{"hold", "--user", strconv.Itoa(st.user)}
	for i, p := range st.paths {
		out = append(out, "--stage", strconv.Itoa(i)+"="+p)
	}
	return init, append(append(out, "--", bwrap), args...), syscall.CLONE_NEWNS
}
