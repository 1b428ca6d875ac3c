package engine

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/lab"
)

// Reset returns the target to the attempt's baseline without rebuilding
// the cluster, and starts the attempt afresh (Started is now; T0, T1 and
// the recorded primary are cleared). What reset means per action kind:
//
//   - createCluster: the PostgresCluster and its claims are deleted;
//   - applyManifest: its objects are deleted;
//   - removeRoleVerbs: the operator's ClusterRole gets its chart's rules
//     back (another role, the removed verbs);
//   - applyQuota: the ResourceQuota is deleted;
//   - stopOperator: the operator is started;
//   - scaleCluster, setStorageClass, switchover, deletePrimaryPod: the
//     baseline's replicas, storage class and primary are restored (a
//     deleted pod is re-made by its StatefulSet);
//   - installOperator, startOperator, deleteObject, waitCondition: nothing.
//
// Then the cluster must reach the exercise's steady state again. Reset is
// idempotent.
func (e *Engine) Reset(ctx context.Context, l *lab.Lab, a *Attempt, progress Progress) error {
	e.use(l)
	ex, err := exercise(l, a.Exercise)
	if err != nil {
		return err
	}
	var problems []error
	step := func(kind, msg string, fn func() error) {
		report(progress, Step{Phase: PhaseReset, Exercise: a.Exercise, Kind: kind, Message: msg})
		start := time.Now()
		err := fn()
		report(progress, Step{Phase: PhaseReset, Exercise: a.Exercise, Kind: kind, Message: msg, Done: true, Err: err, Elapsed: time.Since(start)})
		if err != nil {
			problems = append(problems, err)
		}
	}
	for i := len(ex.Chaos) - 1; i >= 0; i-- {
		s := ex.Chaos[i]
		if _, undo := actionFor(s.Params); undo != nil {
			step(s.Kind, "undo: "+describeAction(s), func() error { return undo(ctx, e, a) })
		}
	}
	b := a.Baseline
	t := l.Target
	if ok, _ := e.operatorReady(ctx); b.OperatorReady && !ok {
		step("startOperator", "start the operator", func() error { return e.startOperator(ctx) })
	}
	cur, _ := e.baseline(ctx, t)
	switch {
	case !b.ClusterExists && cur.ClusterExists:
		step("createCluster", "delete "+t.Cluster+", which did not exist", func() error { return e.deleteCluster(ctx, t) })
	case b.ClusterExists && cur.ClusterExists:
		if cur.Replicas != b.Replicas {
			step("scaleCluster", fmt.Sprintf("scale %s back to %d", t.Cluster, b.Replicas), func() error { return e.scaleCluster(ctx, t, b.Replicas) })
		}
		if cur.StorageClass != b.StorageClass {
			step("setStorageClass", "restore the storage class", func() error { return e.setStorageClass(ctx, t, b.StorageClass) })
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("reset exercise %s: %w", a.Exercise, errs(problems))
	}
	if b.ClusterExists && b.Primary != "" && cur.Primary != b.Primary {
		step("switchover", "switch back to "+b.Primary, func() error {
			// The steady state may name the primary itself (primaryIs), which
			// only the switchover can make true: wait for the rest of it.
			if err := e.waitChecks(ctx, a, withoutPrimaryIs(ex.SteadyState)); err != nil {
				return err
			}
			return e.switchover(ctx, t, b.Primary)
		})
	}
	step("steadyState", "wait for the steady state", func() error { return e.waitSteady(ctx, a, ex) })
	if len(problems) > 0 {
		return fmt.Errorf("reset exercise %s: %w", a.Exercise, errs(problems))
	}
	*a = Attempt{Lab: a.Lab, Exercise: a.Exercise, Started: time.Now(), Baseline: b}
	return nil
}

// waitSteady waits, within the checks' budgets, for the steady state.
func (e *Engine) waitSteady(ctx context.Context, a *Attempt, ex *lab.Exercise) error {
	return e.waitChecks(ctx, a, ex.SteadyState)
}

// withoutPrimaryIs returns the checks other than primaryIs.
func withoutPrimaryIs(checks []lab.Check) []lab.Check {
	var out []lab.Check
	for _, c := range checks {
		if c.Kind != "primaryIs" {
			out = append(out, c)
		}
	}
	return out
}

// waitChecks waits, within the checks' budgets, for steady-state checks.
func (e *Engine) waitChecks(ctx context.Context, a *Attempt, checks []lab.Check) error {
	rep, err := e.runChecks(ctx, PhaseSteadyState, a, checks, CheckOptions{})
	if err != nil {
		return err
	}
	if !rep.Passed {
		return fmt.Errorf("%w: %s", ErrNotSteady, firstFailure(rep))
	}
	return nil
}

// Teardown undoes what a lab did to the cluster, so that another lab can
// start on it: every PostgresCluster, manifest and quota its steps made is
// deleted, roles its chaos cut are restored, and the operator (kept
// installed) runs. A third-party operator is uninstalled once what it made
// for the lab is gone. It is idempotent.
func (e *Engine) Teardown(ctx context.Context, l *lab.Lab, progress Progress) error {
	e.use(l)
	var steps []lab.Step
	steps = append(steps, l.Setup...)
	for _, ex := range l.Exercises {
		steps = append(steps, ex.Chaos...)
		steps = append(steps, ex.Solution...)
	}
	var problems []error
	// The operator runs first: a third-party operator deletes what its
	// resources made only while it runs.
	op := e.operator()
	if _, err := e.cs.AppsV1().Deployments(op.Namespace).Get(ctx, op.Deployment, metav1.GetOptions{}); err == nil {
		if ok, _ := e.operatorReady(ctx); !ok {
			if err := e.startOperator(ctx); err != nil {
				problems = append(problems, err)
			}
		}
	}
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		if _, ok := s.Params.(*lab.StopOperator); ok {
			continue // the operator was started above
		}
		_, undo := actionFor(s.Params)
		if undo == nil {
			continue
		}
		report(progress, Step{Phase: PhaseReset, Index: len(steps) - 1 - i, Total: len(steps), Kind: s.Kind, Message: "undo: " + describeAction(s)})
		start := time.Now()
		err := undo(ctx, e, nil)
		report(progress, Step{Phase: PhaseReset, Index: len(steps) - 1 - i, Total: len(steps), Kind: s.Kind, Message: "undo: " + describeAction(s), Done: true, Err: err, Elapsed: time.Since(start)})
		if err != nil {
			problems = append(problems, err)
		}
	}
	if l.LearnerWritesController() {
		if err := e.uninstallController(ctx, l.ID); err != nil {
			problems = append(problems, err)
		}
	} else if l.Operator != "" && len(problems) == 0 {
		report(progress, Step{Phase: PhaseReset, Kind: "installOperator", Message: "uninstall " + l.Operator})
		start := time.Now()
		err := e.uninstallThirdParty(ctx, l.Operator)
		report(progress, Step{Phase: PhaseReset, Kind: "installOperator", Message: "uninstall " + l.Operator, Done: true, Err: err, Elapsed: time.Since(start)})
		if err != nil {
			problems = append(problems, err)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("tear down lab %s: %w", l.ID, errs(problems))
	}
	return nil
}
