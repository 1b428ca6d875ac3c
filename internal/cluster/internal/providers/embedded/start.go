package embedded

import (
	"context"
	"errors"
	"fmt"

	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// Stop stops every process of the cluster, in reverse start order, and keeps
// its directory: its certificates, configuration and etcd data. Start starts
// it again. Stopping a cluster that is not running is not an error.
func (p *Provider) Stop(ctx context.Context, name string) error {
	st, dir, unlock, err := p.lockedState(name)
	if err != nil {
		return err
	}
	defer unlock()
	if err := p.stopProcesses(st, dir); err != nil {
		return err
	}
	if err := p.stopMarked(dir); err != nil {
		return err
	}
	// Start makes the cell anew, and its group with it.
	if g := st.Cell.group(); g != nil {
		if err := g.Delete(); err != nil {
			return err
		}
	}
	p.logger.Info("cluster stopped", "cluster", name)
	return nil
}

// Start starts again a cluster whose processes have all stopped — the
// machine or the pod it ran in restarted, or Stop stopped it — from its
// directory: the same ports, certificates and etcd data, so every object the
// learner made is there. Host processes are not started again: whoever
// started them does that. Start fails when a process of the cluster still
// runs, and for a cluster whose Create never finished (it has nothing to
// start from: delete it).
func (p *Provider) Start(ctx context.Context, name string, opts providers.CreateOptions) error {
	if err := p.checkBinaries(); err != nil {
		return err
	}
	st, dir, unlock, err := p.lockedState(name)
	if err != nil {
		return err
	}
	defer unlock()
	if !st.Ready {
		return fmt.Errorf("cluster %q was never ready: nothing to start (delete it)", name)
	}
	for _, rec := range st.Processes {
		if p.reaper.alive(rec.PID, dir) {
			return fmt.Errorf("cluster %q is running (%s, pid %d): stop it first", name, rec.process(), rec.PID)
		}
	}
	for _, port := range []int{st.Ports.EtcdClient, st.Ports.EtcdPeer, st.Ports.APIServer, st.Ports.ControllerManager, st.Ports.Scheduler, st.Ports.Kwok} {
		if err := checkPortFree(port); err != nil {
			return fmt.Errorf("start cluster %q: %w", name, err)
		}
	}
	// The old records name processes that are gone; the state keeps Ready,
	// so the cluster reads as degraded, never abandoned, while it starts.
	st.Processes, st.Cell = nil, nil
	if err := writeState(dir, st); err != nil {
		return err
	}
	l := layout{dir}
	c := &creation{p: p, st: st, l: l, progress: opts.Progress, pki: &pki{dir: l.pkiDir()}}
	if err := c.startProcesses(ctx, ""); err != nil {
		// Leave nothing running half-started; the data stays for another try.
		return errors.Join(err, p.stopProcesses(st, dir))
	}
	p.logger.Info("cluster started again", "cluster", name)
	return nil
}
