package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"oplab.dev/oplab/internal/fence"
	"oplab.dev/oplab/internal/lab"
)

// Setup runs the lab's setup actions in order, reporting each step. Beside
// them it fences the cluster (see package fence): the learner's identity
// and the admission policies, enforced before Setup returns, so the
// cluster is never handed out without them. The fence takes about a second
// (the API server picks up new policies within one), hidden behind the
// operator's install.
func (e *Engine) Setup(ctx context.Context, l *lab.Lab, progress Progress) error {
	e.use(l)
	fenced := make(chan error, 1)
	go func() { fenced <- fence.Install(ctx, e.cfg) }()
	err := e.runSteps(ctx, PhaseSetup, "", l.Setup, nil, progress)
	if ferr := <-fenced; ferr != nil {
		err = errors.Join(err, fmt.Errorf("fence the learner's identity: %w", ferr))
	}
	return err
}

// Begin starts an attempt at exercise id: it records the time and the
// baseline Reset returns to.
func (e *Engine) Begin(ctx context.Context, l *lab.Lab, id string) (*Attempt, error) {
	e.use(l)
	if _, err := exercise(l, id); err != nil {
		return nil, err
	}
	b, err := e.baseline(ctx, l.Target)
	if err != nil {
		return nil, err
	}
	return &Attempt{Lab: l.ID, Exercise: id, Started: time.Now(), Baseline: b}, nil
}

func (e *Engine) baseline(ctx context.Context, t lab.Target) (Baseline, error) {
	var b Baseline
	b.OperatorReady, _ = e.operatorReady(ctx)
	if t.Cluster == "" {
		return b, nil
	}
	pgc, err := e.cluster(ctx, t)
	if apierrors.IsNotFound(err) {
		return b, nil
	}
	if err != nil {
		return b, err
	}
	b.ClusterExists = true
	b.ClusterUID = string(pgc.UID)
	b.Replicas = pgc.Spec.Replicas
	if sc := pgc.Spec.Storage.StorageClassName; sc != nil {
		b.StorageClass = *sc
	}
	b.Primary = pgc.Status.CurrentPrimary
	return b, nil
}

// SteadyState runs the exercise's steady-state gate. A gate that does not
// pass is a Report with Passed false, not an error.
func (e *Engine) SteadyState(ctx context.Context, l *lab.Lab, a *Attempt, o CheckOptions) (Report, error) {
	e.use(l)
	ex, err := exercise(l, a.Exercise)
	if err != nil {
		return Report{}, err
	}
	return e.runChecks(ctx, PhaseSteadyState, a, ex.SteadyState, o)
}

// Chaos runs the exercise's chaos actions, then waits until its
// faultConfirmed checks pass and records that moment as a.T0. It does
// nothing for an attempt whose chaos already took effect, or an exercise
// without chaos. Call SteadyState first: chaos on a cluster that is not
// steady teaches nothing.
func (e *Engine) Chaos(ctx context.Context, l *lab.Lab, a *Attempt, progress Progress) (Report, error) {
	e.use(l)
	ex, err := exercise(l, a.Exercise)
	if err != nil {
		return Report{}, err
	}
	if len(ex.Chaos) == 0 || !a.T0.IsZero() {
		return Report{Passed: true, At: a.T0}, nil
	}
	if pgc, err := e.cluster(ctx, l.Target); err == nil {
		a.PrimaryAtT0 = pgc.Status.CurrentPrimary
	}
	if err := e.runSteps(ctx, PhaseChaos, a.Exercise, ex.Chaos, a, progress); err != nil {
		return Report{}, err
	}
	// After the chaos, which may be what creates the cluster.
	if pgc, err := e.cluster(ctx, l.Target); err == nil {
		a.ClusterAtT0 = string(pgc.UID)
	}
	rep, err := e.runChecks(ctx, PhaseFault, a, ex.FaultConfirmed, CheckOptions{Progress: progress})
	if err != nil {
		return rep, err
	}
	if !rep.Passed {
		return rep, fmt.Errorf("exercise %s: %w: %s", a.Exercise, ErrFaultNotConfirmed, firstFailure(rep))
	}
	a.T0 = rep.At
	return rep, nil
}

// Check runs the exercise's goal checks. When all pass for the first time
// it records a.T1, and the report carries the time to recovery.
func (e *Engine) Check(ctx context.Context, l *lab.Lab, a *Attempt, o CheckOptions) (Report, error) {
	e.use(l)
	ex, err := exercise(l, a.Exercise)
	if err != nil {
		return Report{}, err
	}
	rep, err := e.runChecks(ctx, PhaseGoals, a, ex.Goals, o)
	if err != nil {
		return rep, err
	}
	if rep.Passed && a.T1.IsZero() {
		a.T1 = rep.At
	}
	if rep.Passed {
		rep.Recovery = a.Recovery()
	}
	return rep, nil
}

// Solve runs the exercise's reference solution.
func (e *Engine) Solve(ctx context.Context, l *lab.Lab, a *Attempt, progress Progress) error {
	e.use(l)
	ex, err := exercise(l, a.Exercise)
	if err != nil {
		return err
	}
	return e.runSteps(ctx, PhaseSolution, a.Exercise, ex.Solution, a, progress)
}

// firstFailure is the reason of the first failed result.
func firstFailure(r Report) string {
	for _, res := range r.Results {
		if !res.Passed {
			return res.Kind + ": " + res.Reason
		}
	}
	return "no check failed"
}

// errs joins the errors of best-effort steps.
func errs(list []error) error { return errors.Join(list...) }
