package engine

import (
	"context"
	"fmt"
	"time"

	"oplab.dev/oplab/internal/lab"
)

// SelfTestReport is the result of a lab's self-test.
type SelfTestReport struct {
	Lab       string             `json:"lab"`
	Setup     time.Duration      `json:"setup"`
	Exercises []ExerciseSelfTest `json:"exercises"`
	Passed    bool               `json:"passed"`
	Elapsed   time.Duration      `json:"elapsed"`
}

// ExerciseSelfTest is the self-test of one exercise: the steady state
// before chaos, the fault, the goals on the broken state and after the
// reference solution.
type ExerciseSelfTest struct {
	ID     string `json:"id"`
	Steady Report `json:"steady"`
	Fault  Report `json:"fault"`
	Broken Report `json:"broken"`
	Fixed  Report `json:"fixed"`
	Passed bool   `json:"passed"`
	// Problem says what failed, in one line.
	Problem string        `json:"problem,omitempty"`
	Elapsed time.Duration `json:"elapsed"`
}

// BrokenWindow is how long the self-test watches the goals right after
// the chaos (or, without chaos, before the solution): they must not all
// pass within it. It allows every shipped check its consecutive passes.
const BrokenWindow = 1500 * time.Millisecond

// SelfTest creates an Engine for t and runs the self-test of l on it (see
// Engine.SelfTest).
func SelfTest(ctx context.Context, l *lab.Lab, t Target, progress Progress) (*SelfTestReport, error) {
	e, err := New(t)
	if err != nil {
		return nil, err
	}
	return e.SelfTest(ctx, l, progress)
}

// SelfTest runs l's setup, then, for every exercise in order: the steady
// state must pass before chaos, the chaos's fault must be confirmed, the
// goals must fail right after it, and pass after the reference solution.
// It stops at the first exercise that fails, since the next one starts
// from its end state. A lab that fails its self-test is a report with
// Passed false; the error is for a setup that could not run.
func (e *Engine) SelfTest(ctx context.Context, l *lab.Lab, progress Progress) (*SelfTestReport, error) {
	start := time.Now()
	rep := &SelfTestReport{Lab: l.ID}
	if err := e.Setup(ctx, l, progress); err != nil {
		return rep, fmt.Errorf("self-test of lab %s: %w", l.ID, err)
	}
	rep.Setup = time.Since(start)
	rep.Passed = true
	for i := range l.Exercises {
		ex := e.selfTestExercise(ctx, l, &l.Exercises[i], progress)
		rep.Exercises = append(rep.Exercises, ex)
		if !ex.Passed {
			rep.Passed = false
			break
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

func (e *Engine) selfTestExercise(ctx context.Context, l *lab.Lab, ex *lab.Exercise, progress Progress) (r ExerciseSelfTest) {
	start := time.Now()
	r.ID = ex.ID
	defer func() {
		r.Elapsed = time.Since(start)
		r.Passed = r.Problem == ""
		msg := "passed"
		var err error
		if !r.Passed {
			msg, err = r.Problem, fmt.Errorf("%s", r.Problem)
		}
		report(progress, Step{Phase: PhaseSelfTest, Exercise: ex.ID, Message: msg, Done: true, Err: err, Elapsed: r.Elapsed})
	}()
	a, err := e.Begin(ctx, l, ex.ID)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	checkOpts := CheckOptions{Progress: progress}
	if r.Steady, err = e.SteadyState(ctx, l, a, checkOpts); err != nil || !r.Steady.Passed {
		r.Problem = problem("the steady state did not pass", r.Steady, err)
		return r
	}
	if r.Fault, err = e.Chaos(ctx, l, a, progress); err != nil {
		r.Problem = problem("the chaos failed", r.Fault, err)
		return r
	}
	if r.Broken, err = e.Check(ctx, l, a, CheckOptions{Timeout: BrokenWindow, Progress: progress}); err != nil || r.Broken.Passed {
		r.Problem = problem("the goals passed on the broken state, before any repair", r.Broken, err)
		return r
	}
	a.T1 = time.Time{} // a failed check must not have set it; be sure
	if err := e.Solve(ctx, l, a, progress); err != nil {
		r.Problem = problem("the reference solution failed", Report{}, err)
		return r
	}
	if r.Fixed, err = e.Check(ctx, l, a, checkOpts); err != nil || !r.Fixed.Passed {
		r.Problem = problem("the goals did not pass after the reference solution", r.Fixed, err)
	}
	return r
}

// problem describes a failed self-test step in one line.
func problem(what string, rep Report, err error) string {
	switch {
	case err != nil:
		return fmt.Sprintf("%s: %v", what, err)
	case len(rep.Results) > 0 && !rep.Passed:
		return fmt.Sprintf("%s: %s", what, firstFailure(rep))
	}
	return what
}
