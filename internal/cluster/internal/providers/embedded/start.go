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
// learner made is there. Its host processes (the operator) start again too,
// as they were started, once the control plane is up. Start fails when a
// process of the cluster still runs, and for a cluster whose Create never
// finished (it has nothing to start from: delete it).
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
	var hosts []providers.HostProcess
	for _, rec := range st.Processes {
		if rec.Host && rec.Spec != nil {
			hosts = append(hosts, *rec.Spec)
		}
	}
	st.Processes, st.Cell = nil, nil
	if err := writeState(dir, st); err != nil {
		return err
	}
	l := layout{dir}
	c := &creation{p: p, st: st, l: l, progress: opts.Progress, pki: &pki{dir: l.pkiDir()}}
	err = c.startProcesses(ctx, "")
	for _, spec := range hosts {
		if err != nil {
			break
		}
		err = p.startHostProcess(ctx, st, dir, spec)
	}
	if err != nil {
		// Leave nothing running half-started; the data stays for another
		// try, and so do the host processes' specs.
		err = errors.Join(err, p.stopProcesses(st, dir))
		st.Processes = append(st.Processes, hostRecords(hosts)...)
		return errors.Join(err, writeState(dir, st))
	}
	if err := writeState(dir, st); err != nil {
		return err
	}
	p.logger.Info("cluster started again", "cluster", name, "host processes", len(hosts))
	return nil
}

// hostRecords are records of host processes that do not run, kept for
// Start to start them.
func hostRecords(specs []providers.HostProcess) []processRecord {
	out := make([]processRecord, 0, len(specs))
	for _, spec := range specs {
		out = append(out, processRecord{Name: spec.Name, Host: true, Spec: &spec})
	}
	return out
}
