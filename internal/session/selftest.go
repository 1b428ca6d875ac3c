package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/lab"
)

// SelfTestOptions tune SelfTest.
type SelfTestOptions struct {
	// Labs are the ids of the labs to self-test, in order; every lab of
	// the course when empty.
	Labs []string
	// Keep leaves the cluster running afterwards, to look around in.
	Keep bool
	// ClusterProgress hears the steps of creating the cluster.
	ClusterProgress func(cluster.Step)
	// Progress hears each step of the self-tests.
	Progress engine.Progress
	// LabStarted is called as each lab's self-test begins, and LabDone
	// with its report as it ends.
	LabStarted func(lab string)
	LabDone    func(*engine.SelfTestReport)
}

// SelfTestRun is the outcome of SelfTest.
type SelfTestRun struct {
	// Cluster is the cluster the labs ran on; it still exists when Kept.
	Cluster string                   `json:"cluster"`
	Kept    bool                     `json:"kept"`
	Reports []*engine.SelfTestReport `json:"reports"`
	// Failed counts the labs whose self-test did not pass.
	Failed int `json:"failed"`
	// Skipped are the labs of the course the provider cannot run (a lab of
	// a third-party operator on the embedded provider), when no lab was
	// named.
	Skipped []SkippedLab `json:"skipped,omitempty"`
}

// SkippedLab is a lab SelfTest left out, and the capabilities it needs
// that the provider lacks.
type SkippedLab struct {
	Lab     string   `json:"lab"`
	Missing []string `json:"missing"`
}

// SelfTest proves that labs' graders work (what `oplab lab selftest`
// runs): on a fresh cluster of its own, outside any session, each lab's
// setup runs and then, for every exercise in order, the steady state must
// pass, the chaos's fault be confirmed, the goals fail on the broken state
// and pass after the reference solution. The labs run one after another,
// each torn down before the next; the cluster is deleted afterwards unless
// o.Keep. A lab that fails its self-test is counted in Failed; an error
// means the run itself could not go on.
func (m *Manager) SelfTest(ctx context.Context, o SelfTestOptions) (*SelfTestRun, error) {
	labs, err := m.selfTestLabs(o.Labs)
	if err != nil {
		return nil, err
	}
	if m.o.Provider == nil {
		return nil, errors.New("self-test: no cluster provider configured")
	}
	run := &SelfTestRun{Cluster: selfTestName()}
	// Every lab it can run when none is named; a named one it cannot is
	// an error, before any cluster is made.
	runnable := labs[:0:0]
	for _, l := range labs {
		missing := m.missing(l)
		switch {
		case len(missing) == 0:
			runnable = append(runnable, l)
		case len(o.Labs) > 0:
			return nil, fmt.Errorf("self-test lab %s needs %v, which the %s provider lacks: %w", l.ID, missing, m.o.Provider.Info().Name, ErrUnsupported)
		default:
			run.Skipped = append(run.Skipped, SkippedLab{Lab: l.ID, Missing: missing})
		}
	}
	labs = runnable
	e, err := m.selfTestCluster(ctx, run.Cluster, o.ClusterProgress)
	if err != nil {
		return nil, err
	}
	defer func() {
		if o.Keep {
			run.Kept = true
			return
		}
		// The caller's context may be cancelled; the cluster must go anyway.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := m.o.Provider.Delete(dctx, run.Cluster); err != nil {
			m.log.Warn("delete self-test cluster", "cluster", run.Cluster, "err", err)
		}
	}()
	for _, l := range labs {
		if o.LabStarted != nil {
			o.LabStarted(l.ID)
		}
		rep, err := e.SelfTest(ctx, l, o.Progress)
		if err != nil {
			return run, fmt.Errorf("self-test lab %s: %w", l.ID, err)
		}
		// The next lab starts from a clean cluster.
		if err := e.Teardown(ctx, l, nil); err != nil {
			return run, fmt.Errorf("tear down lab %s: %w", l.ID, err)
		}
		run.Reports = append(run.Reports, rep)
		if !rep.Passed {
			run.Failed++
		}
		if o.LabDone != nil {
			o.LabDone(rep)
		}
	}
	return run, nil
}

func (m *Manager) selfTestLabs(ids []string) ([]*lab.Lab, error) {
	if len(ids) == 0 {
		return m.o.Course.Labs(), nil
	}
	labs := make([]*lab.Lab, 0, len(ids))
	for _, id := range ids {
		l, err := m.Lab(id)
		if err != nil {
			return nil, fmt.Errorf("load lab %s: %w", id, err)
		}
		labs = append(labs, l)
	}
	return labs, nil
}

// selfTestCluster creates cluster name and returns an engine on it; a
// cluster that could not be made ready is deleted.
func (m *Manager) selfTestCluster(ctx context.Context, name string, progress func(cluster.Step)) (*engine.Engine, error) {
	p := m.o.Provider
	remove := func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = p.Delete(dctx, name)
	}
	if err := p.Create(ctx, name, cluster.CreateWithProgress(progress)); err != nil {
		remove()
		return nil, fmt.Errorf("create cluster %s: %w", name, err)
	}
	cfg, err := p.RESTConfig(name)
	if err == nil {
		var e *engine.Engine
		if e, err = engine.New(engine.Target{Config: cfg, Provider: p, Cluster: name, BinDir: m.o.BinDir, Logger: m.log}); err == nil {
			return e, nil
		}
	}
	remove()
	return nil, err
}

// selfTestName names a self-test's cluster so that it cannot be taken for
// a session's.
func selfTestName() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return "selftest-" + hex.EncodeToString(b)
}
