package cell

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A cell of a user of its own (Spec.User) is made by bwrap running as that
// user, who may not reach the cell's paths on the host: a data directory
// under /root is not theirs to enter. bwrap resolves every path it binds as
// the user it runs as, so "cell hold", run as root in a mount namespace of
// its own, first stages each path at a place the user can reach — a tmpfs
// over /tmp, in that namespace only, with each path bind-mounted at a
// number — then becomes the user and executes bwrap.

// stageRoot is where "cell hold" stages the paths bwrap binds.
const stageRoot = "/tmp"

// runHold is "cell hold --user UID --stage N=PATH... -- BWRAP ARGS...",
// run as root in a mount namespace of its own.
func runHold(args []string) error {
	fs := flag.NewFlagSet("cell hold", flag.ContinueOnError)
	user := fs.Int("user", 0, "the unprivileged user to run bwrap as")
	var stages []string
	fs.Func("stage", "N=PATH: make PATH reachable as "+stageRoot+"/N", func(v string) error {
		stages = append(stages, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *user <= 0 || fs.NArg() == 0 {
		return errors.New("usage: cell hold --user UID [--stage N=PATH...] -- BWRAP [ARGS...]")
	}
	// The tmpfs below goes over /tmp: in the machine's own mount
	// namespace it would hide every file there from everyone.
	if own, err := os.Readlink("/proc/self/ns/mnt"); err != nil {
		return fmt.Errorf("cell hold: %w", err)
	} else if parent, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", os.Getppid())); err == nil && own == parent {
		return errors.New("cell hold must start in a mount namespace of its own (its parent's is shared): start it with CLONE_NEWNS, as Staging.Command says")
	}
	// Every path is opened before the tmpfs hides what is under /tmp.
	type staged struct {
		n int
		f *os.File
	}
	var opened []staged
	defer func() {
		for _, s := range opened {
			s.f.Close()
		}
	}()
	for _, st := range stages {
		nText, path, ok := strings.Cut(st, "=")
		n, err := strconv.Atoi(nText)
		if !ok || err != nil || n < 0 {
			return fmt.Errorf("--stage %q: want N=PATH", st)
		}
		f, err := os.OpenFile(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("stage %s: %w", path, err)
		}
		opened = append(opened, staged{n, f})
	}
	if err := unix.Mount("tmpfs", stageRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("stage: mount a tmpfs on %s: %w", stageRoot, err)
	}
	for _, s := range opened {
		target := filepath.Join(stageRoot, strconv.Itoa(s.n))
		fi, err := s.f.Stat()
		if err != nil {
			return err
		}
		if fi.IsDir() {
			err = os.Mkdir(target, 0o755)
		} else {
			err = os.WriteFile(target, nil, 0o444)
		}
		if err != nil {
			return fmt.Errorf("stage: %w", err)
		}
		if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", s.f.Fd()), target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("stage %s: %w", fi.Name(), err)
		}
	}
	// Become the cell's user for good: no supplementary groups, and bwrap
	// then gets no privilege it could keep.
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("drop groups: %w", err)
	}
	if err := syscall.Setgid(*user); err != nil {
		return fmt.Errorf("become group %d: %w", *user, err)
	}
	if err := syscall.Setuid(*user); err != nil {
		return fmt.Errorf("become user %d: %w", *user, err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	return syscall.Exec(fs.Arg(0), fs.Args(), os.Environ())
}

// Own gives the cell's user what is under the cell's directory but the
// files the host keeps for itself there (s.Keep), and lets that user into the directory without letting it add or remove
// entries there. It does nothing for a cell of the caller's own user. The
// host writes files the cell must read (certificates, kubeconfigs, a copied
// etcd seed, the operator's token): call it before a process starts in the
// cell.
func (s Spec) Own() error {
	if s.User == 0 {
		return nil
	}
	kept := map[string]bool{}
	for _, k := range s.Keep {
		kept[filepath.Join(s.Dir, k)] = true
	}
	err := filepath.WalkDir(s.Dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == s.Dir || kept[path] {
			return nil
		}
		// A file with other links is one the host shares, read-only (the
		// build kit's cache, made by the embedded provider's Share): given
		// to the cell, it would be given everywhere it is linked.
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
					return nil
				}
			}
		}
		return os.Lchown(path, s.User, s.User)
	})
	if err != nil {
		return fmt.Errorf("give the cell its files: %w", err)
	}
	return os.Chmod(s.Dir, 0o711)
}
