package bwrap

import (
	"debug/elf"
	"os"
	"path/filepath"
)

// systemBinds bind the host's /usr read-only, with /lib, /lib64, /bin and
// /sbin as the host has them (links on a merged-/usr system).
func systemBinds() []string {
	args := []string{"--ro-bind", "/usr", "/usr"}
	for _, p := range []string{"/lib", "/lib64", "/bin", "/sbin"} {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(p); err == nil {
				args = append(args, "--symlink", target, p)
			}
		case fi.IsDir():
			args = append(args, "--ro-bind", p, p)
		}
	}
	return args
}

// Dynamic reports whether the program, or a program in the directory prog,
// needs a dynamic loader (and so the host's libraries, Sandbox.System) to
// run.
func Dynamic(prog string) bool {
	if entries, err := os.ReadDir(prog); err == nil {
		for _, e := range entries {
			if e.Type().IsRegular() && Dynamic(filepath.Join(prog, e.Name())) {
				return true
			}
		}
		return false
	}
	f, err := elf.Open(prog)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true
		}
	}
	return false
}
