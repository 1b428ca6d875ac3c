package bwrap

import (
	"path/filepath"
	"strconv"
)

// Sandbox is what one sandbox holds and which namespaces it has, as its
// caller decides. Every sandbox has a user namespace of its own in which
// its programs run as UID and GID with no capabilities, and PID, IPC, UTS
// and (where the kernel has them) cgroup namespaces of their own; its root
// is empty but for what is listed here, /proc and /dev.
type Sandbox struct {
	// Hostname is the sandbox's name in its UTS namespace.
	Hostname string
	// Net gives the sandbox a network namespace of its own, with only a
	// loopback interface; otherwise it shares its caller's network.
	Net bool
	// DieWithParent ends the sandbox when bwrap's parent process ends.
	DieWithParent bool
	// Tmp is the host directory that is the sandbox's /tmp; a private
	// tmpfs when empty. It is bound before Binds, which may be inside it.
	Tmp string
	// Binds are the host paths in the sandbox, bound in this order: a
	// bind inside another's destination comes after it.
	Binds []Bind
	// Etc, when set, is the directory WriteEtc wrote: each of its files
	// is bound read-only at /etc.
	Etc string
	// System binds the host's /usr read-only, with /lib, /lib64, /bin and
	// /sbin as the host has them: a dynamically linked program needs the
	// loader and libc (Dynamic says which do). They hold public files
	// only.
	System bool
	// InfoFD, when not zero, is the file descriptor (bwrap's) to which
	// bwrap writes what it made, in JSON: "child-pid" is the host PID of
	// the sandbox's first process.
	InfoFD int
	// Chdir is the working directory in the sandbox.
	Chdir string
	// Source names a host path as bwrap reaches it; the path itself when
	// nil. A bwrap that runs as an unprivileged user of its own reaches
	// the places where "cell hold" staged Paths (cell.Staging.Source).
	Source func(string) string
}

// Bind is a host path in a sandbox.
type Bind struct {
	// Src is the host path; Dst is where the sandbox sees it, Src when
	// empty.
	Src, Dst string
	// Writable binds it read-write, else read-only.
	Writable bool
	// Try leaves the bind out where Src does not exist. Such a path is a
	// public one of the host's (/etc/resolv.conf), which bwrap reaches as
	// whoever it runs as: it is not one of Paths, and not staged.
	Try bool
}

// Args is bwrap's argument list that runs prog with args in the sandbox.
func (s Sandbox) Args(prog string, args ...string) []string {
	source := s.Source
	if source == nil {
		source = func(p string) string { return p }
	}
	out := []string{"--unshare-user", "--unshare-ipc", "--unshare-pid"}
	if s.Net {
		out = append(out, "--unshare-net")
	}
	out = append(out, "--unshare-uts", "--unshare-cgroup-try",
		"--uid", strconv.Itoa(UID), "--gid", strconv.Itoa(GID), "--cap-drop", "ALL")
	if s.DieWithParent {
		out = append(out, "--die-with-parent")
	}
	out = append(out, "--hostname", s.Hostname, "--proc", "/proc", "--dev", "/dev")
	if s.Tmp != "" {
		out = append(out, "--bind", source(s.Tmp), "/tmp")
	} else {
		out = append(out, "--tmpfs", "/tmp")
	}
	for _, b := range s.Binds {
		dst := b.Dst
		if dst == "" {
			dst = b.Src
		}
		switch {
		case b.Try && b.Writable:
			out = append(out, "--bind-try", b.Src, dst)
		case b.Try:
			out = append(out, "--ro-bind-try", b.Src, dst)
		case b.Writable:
			out = append(out, "--bind", source(b.Src), dst)
		default:
			out = append(out, "--ro-bind", source(b.Src), dst)
		}
	}
	if s.Etc != "" {
		for _, name := range etcNames {
			out = append(out, "--ro-bind", source(filepath.Join(s.Etc, name)), "/etc/"+name)
		}
	}
	if s.System {
		out = append(out, systemBinds()...)
	}
	if s.InfoFD != 0 {
		out = append(out, "--info-fd", strconv.Itoa(s.InfoFD))
	}
	if s.Chdir != "" {
		out = append(out, "--chdir", s.Chdir)
	}
	return append(append(out, "--", prog), args...)
}

// Paths are the host paths Args names through Source: Tmp, the binds but
// those tried, and the /etc files.
func (s Sandbox) Paths() []string {
	var out []string
	if s.Tmp != "" {
		out = append(out, s.Tmp)
	}
	for _, b := range s.Binds {
		if !b.Try {
			out = append(out, b.Src)
		}
	}
	if s.Etc != "" {
		for _, name := range etcNames {
			out = append(out, filepath.Join(s.Etc, name))
		}
	}
	return out
}
