package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"oplab.dev/oplab/internal/bwrap"
	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// workspace is the directory of a cluster that oplab gives its processes
// files in; see providers.Workshop.
func (l layout) workspace() string { return filepath.Join(l.dir, "workspace") }

// Workspace returns the cluster's workspace, made if missing.
func (p *Provider) Workspace(ctx context.Context, cluster string) (string, error) {
	_, dir, unlock, err := p.lockedState(cluster)
	if err != nil {
		return "", err
	}
	defer unlock()
	ws := layout{dir}.workspace()
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return "", err
	}
	return ws, nil
}

// Share makes the files under src readable by the cluster's processes at
// dst. Where the cell runs as a user of its own, dst holds hard links:
// the files stay the host's, read-only (cell.Spec.Own leaves a file with
// other links alone), and take no disk of the cluster's (diskUsage does
// not count them). Where the cell runs as oplab's own user, which owns
// src's files and so could change them through a link, dst is a copy.
func (p *Provider) Share(ctx context.Context, cluster, src, dst string) error {
	st, dir, unlock, err := p.lockedState(cluster)
	if err != nil {
		return err
	}
	defer unlock()
	link := st.Cell != nil && st.Cell.User != 0
	return providers.ShareTree(ctx, layout{dir}.workspace(), src, dst, 0o700, func(path, to string) error {
		if link {
			return os.Link(path, to)
		}
		return providers.CopyFile(path, to, 0o600)
	})
}

// Run runs c in the cluster's cell (beside the cluster, when it has none)
// and waits for it; see providers.Workshop. The cluster's lock is held only
// while the command is made: a build takes seconds.
func (p *Provider) Run(ctx context.Context, cluster string, c providers.Command) (*os.ProcessState, error) {
	if c.Path == "" {
		return nil, errors.New("no program to run")
	}
	st, dir, unlock, err := p.lockedState(cluster)
	if err != nil {
		return nil, err
	}
	if err := p.checkInCell(st, dir, c.Path); err != nil {
		unlock()
		return nil, err
	}
	path, args, err := p.command(st, dir, "", c.Path, c.Args)
	unlock()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(slices.Clone(c.Env), markerVar+"="+dir)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	// A group of its own, so that an end kills the program and whatever
	// it started in the cell (a compiler, a linker) at once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	return cmd.ProcessState, err
}

// ErrNoSandbox is returned (wrapped) by Confine for a cell made without
// bubblewrap in it: the cluster must be made again.
var ErrNoSandbox = errors.New("this cluster's cell has no sandbox for a learner's program (made by an older oplab, or bubblewrap was missing): reset the session to make it again")

// Confine returns the command line that runs prog confined in the cell:
// bubblewrap, which the cell binds, makes a sandbox inside it with mount,
// PID and user namespaces of its own and the cell's network (its own
// loopback, on which its API server listens). See providers.Workshop.
func (p *Provider) Confine(ctx context.Context, cluster string, c providers.Sandbox, prog string, args []string) (string, []string, error) {
	st, dir, unlock, err := p.lockedState(cluster)
	if err != nil {
		return "", nil, err
	}
	unlock()
	if st.Cell == nil {
		return prog, args, nil
	}
	if st.Cell.Sandbox == "" {
		return "", nil, ErrNoSandbox
	}
	// Only the provider's programs and the workspace: never the
	// cluster's credentials, keys or etcd's data beside them.
	ws := layout{dir}.workspace()
	inside := func(path string) error {
		for _, root := range []string{p.binDir, ws} {
			if rel, err := filepath.Rel(root, path); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				if _, err := os.Stat(path); err != nil {
					return fmt.Errorf("confine %s: %w", prog, err)
				}
				return nil
			}
		}
		return fmt.Errorf("confine %s: %s is neither a program of %s nor in the cluster's workspace", prog, path, p.binDir)
	}
	sb := bwrap.Sandbox{
		Hostname:      "learner",
		DieWithParent: true,
		Tmp:           c.Tmp,
		Chdir:         c.Chdir,
		System:        bwrap.Dynamic(prog),
	}
	if c.Tmp != "" {
		if err := inside(c.Tmp); err != nil {
			return "", nil, err
		}
	}
	for _, path := range c.ReadOnly {
		if err := inside(path); err != nil {
			return "", nil, err
		}
		sb.Binds = append(sb.Binds, bwrap.Bind{Src: path})
	}
	for _, path := range c.Writable {
		if err := inside(path); err != nil {
			return "", nil, err
		}
		sb.Binds = append(sb.Binds, bwrap.Bind{Src: path, Writable: true})
	}
	if err := inside(prog); err != nil {
		return "", nil, err
	}
	return st.Cell.Sandbox, sb.Args(prog, args...), nil
}
