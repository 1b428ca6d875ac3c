package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"oplab.dev/oplab/internal/cell"
	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// lockDir takes an exclusive lock on a cluster directory, serialising the
// changes of several oplab processes (a server and a CLI) to its state.
func lockDir(dir string) (unlock func(), err error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// StartHostProcess runs spec beside the cluster; see
// providers.HostProcessRunner.
func (p *Provider) StartHostProcess(ctx context.Context, cluster string, spec providers.HostProcess) error {
	if spec.Name == "" || spec.Path == "" {
		return errors.New("a host process needs a name and a path")
	}
	if err := checkName(spec.Name); err != nil {
		return fmt.Errorf("host process name: %w", err)
	}
	st, dir, unlock, err := p.lockedState(cluster)
	if err != nil {
		return err
	}
	defer unlock()
	if err := p.removeHostProcess(dir, st, spec.Name); err != nil {
		return err
	}
	if err := p.startHostProcess(ctx, st, dir, spec); err != nil {
		return err
	}
	return writeState(dir, st)
}

// startHostProcess starts spec in the cluster of st and records it there,
// with the spec, so that Start runs it again after the cluster stopped.
// The caller holds the cluster's lock and writes the state.
func (p *Provider) startHostProcess(ctx context.Context, st *clusterState, dir string, spec providers.HostProcess) error {
	rec := processRecord{Name: spec.Name, Log: spec.LogPath, Host: true, Spec: &spec}
	if rec.Log == "" {
		rec.Log = layout{dir}.log(spec.Name)
	}
	if err := p.checkInCell(st, dir, spec.Path); err != nil {
		return fmt.Errorf("start %s: %w", spec.Name, err)
	}
	path, args, err := p.command(st, dir, "", spec.Path, spec.Args)
	if err != nil {
		return fmt.Errorf("start %s: %w", spec.Name, err)
	}
	if st.Cell != nil {
		for _, port := range spec.Expose {
			if err := cell.Forward(ctx, dir, spec.Name, port); err != nil {
				cell.CloseForwards(ctx, dir, spec.Name)
				return fmt.Errorf("start %s: expose port %d: %w", spec.Name, port, err)
			}
		}
	}
	// The marker by which a PID is known to be the cluster's.
	env := append(slices.Clone(spec.Env), markerVar+"="+dir)
	pid, err := p.reaper.start(path, args, env, dir, rec.Log, 0)
	if err != nil {
		return fmt.Errorf("start %s: %w", spec.Name, err)
	}
	rec.PID = pid
	st.Processes = append(st.Processes, rec)
	return nil
}

// StopHostProcess stops a process started with StartHostProcess.
func (p *Provider) StopHostProcess(ctx context.Context, cluster, name string) error {
	st, dir, unlock, err := p.lockedState(cluster)
	if err != nil {
		return err
	}
	defer unlock()
	if err := p.removeHostProcess(dir, st, name); err != nil {
		return err
	}
	return writeState(dir, st)
}

func (p *Provider) lockedState(cluster string) (*clusterState, string, func(), error) {
	if err := checkName(cluster); err != nil {
		return nil, "", nil, err
	}
	dir := p.clusterDir(cluster)
	unlock, err := lockDir(dir)
	if err != nil {
		if isNotExist(err) {
			return nil, "", nil, fmt.Errorf("%w: %q", providers.ErrNotFound, cluster)
		}
		return nil, "", nil, err
	}
	st, err := readState(dir)
	if err != nil {
		unlock()
		if isNotExist(err) {
			return nil, "", nil, fmt.Errorf("%w: %q", providers.ErrNotFound, cluster)
		}
		return nil, "", nil, err
	}
	return st, dir, unlock, nil
}

// removeHostProcess stops the named host process and drops its record.
func (p *Provider) removeHostProcess(dir string, st *clusterState, name string) error {
	for i, rec := range st.Processes {
		if rec.Host && rec.Name == name {
			if err := p.reaper.stop(rec.PID, dir, stopGrace); err != nil {
				return fmt.Errorf("stop %s: %w", name, err)
			}
			if st.Cell != nil && p.reaper.alive(st.Cell.Holder, dir) {
				// The ports stay taken on the host until the cell lets go.
				if err := cell.CloseForwards(context.Background(), dir, name); err != nil {
					return fmt.Errorf("stop %s: %w", name, err)
				}
			}
			st.Processes = slices.Delete(st.Processes, i, i+1)
			return nil
		}
	}
	return nil
}
