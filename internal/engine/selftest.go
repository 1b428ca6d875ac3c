package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"oplab.dev/oplab/internal/fence"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/lab"
)

// SelfTestReport is the result of a lab's self-test.
type SelfTestReport struct {
	Lab       string             `json:"lab"`
	Setup     jsonconv.Duration  `json:"setupMs"`
	Exercises []ExerciseSelfTest `json:"exercises"`
	Passed    bool               `json:"passed"`
	Elapsed   jsonconv.Duration  `json:"elapsedMs"`
}

// ExerciseSelfTest is the self-test of one exercise: the steady state
// before chaos, the fault, the goals on the broken state and after the
// reference solution.
type ExerciseSelfTest struct {
	ID     string `json:"id"`
	Steady Report `json:"steady"`
	Fault  Report `json:"fault"`
	Broken Report `json:"broken"`
	// Shortcuts are the verdicts on the exercise's known shortcuts, each
	// applied after the chaos instead of the solution.
	Shortcuts []ShortcutSelfTest `json:"shortcuts,omitempty"`
	Fixed     Report             `json:"fixed"`
	Passed    bool               `json:"passed"`
	// Problem says what failed, in one line.
	Problem string            `json:"problem,omitempty"`
	Elapsed jsonconv.Duration `json:"elapsedMs"`
}

// ShortcutSelfTest is the verdict on one shortcut: the goals after it, and
// whether they refused it. A shortcut is tried with the learner's identity
// (see package fence), so the API server may refuse one of its steps: then
// the learner cannot take it at all, it counts as refused, and API says
// why.
type ShortcutSelfTest struct {
	ID      string `json:"id"`
	Goals   Report `json:"goals"`
	Refused bool   `json:"refused"`
	// API is the API server's refusal of one of the shortcut's steps
	// (which step, and the message), when it refused one; the goals are
	// not run then.
	API string `json:"api,omitempty"`
	// Problem says why the shortcut counts as a failure of the grader
	// (it passed, or the check meant to refuse it did not), or why it could
	// not be tried.
	Problem string            `json:"problem,omitempty"`
	Elapsed jsonconv.Duration `json:"elapsedMs"`
}

// ShortcutWindow is how long the self-test runs the goals after a
// shortcut: a shortcut's steps wait for their own effect (waitCondition),
// so the goals that refuse it fail at once and the rest have had time to
// pass their consecutive polls.
const ShortcutWindow = 3 * time.Second

// BrokenWindow is how long the self-test watches the goals right after
// the chaos (or, without chaos, before the solution): they must not all
// pass within it. It allows every shipped check its consecutive passes. It
// is real time on every provider (CheckOptions.Window): a fault that the
// operator repairs by itself lasts as long as the lab makes it (the
// failover lab's failoverDelay of 4 s), not longer where pods are real.
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
// goals must fail right after it; each shortcut is then applied instead of
// a repair and the goals must fail on it (the exercise is reset and its
// chaos run again after each); and the goals must pass after the reference
// solution.
// It stops at the first exercise that fails, since the next one starts
// from its end state. A lab that fails its self-test is a report with
// Passed false; the error is for a setup that could not run.
func (e *Engine) SelfTest(ctx context.Context, l *lab.Lab, progress Progress) (*SelfTestReport, error) {
	e.use(l)
	e.burstBuilds = true
	defer func() { e.burstBuilds = false }()
	start := time.Now()
	rep := &SelfTestReport{Lab: l.ID}
	if err := e.Setup(ctx, l, progress); err != nil {
		return rep, fmt.Errorf("self-test of lab %s: %w", l.ID, err)
	}
	rep.Setup = jsonconv.Duration(time.Since(start))
	learner, err := e.asLearner(ctx)
	if err != nil {
		return rep, fmt.Errorf("self-test of lab %s: %w", l.ID, err)
	}
	rep.Passed = true
	for i := range l.Exercises {
		ex := e.selfTestExercise(ctx, l, &l.Exercises[i], learner, progress)
		rep.Exercises = append(rep.Exercises, ex)
		if !ex.Passed {
			rep.Passed = false
			break
		}
	}
	rep.Elapsed = jsonconv.Duration(time.Since(start))
	return rep, nil
}

// asLearner returns an Engine on e's cluster that acts as the learner,
// with a new token (see package fence): what it does, a learner could do.
func (e *Engine) asLearner(ctx context.Context) (*Engine, error) {
	cfg, err := fence.Config(ctx, e.cfg)
	if err != nil {
		return nil, fmt.Errorf("act as the learner: %w", err)
	}
	t := e.t
	t.Config, t.Logs = cfg, e.logs
	le, err := New(t)
	if err != nil {
		return nil, err
	}
	le.learner = true
	le.op = e.op // the same lab's operator
	le.admin = e
	return le, nil
}

// selfTestExercise self-tests exercise ex; learner tries its shortcuts.
func (e *Engine) selfTestExercise(ctx context.Context, l *lab.Lab, ex *lab.Exercise, learner *Engine, progress Progress) (r ExerciseSelfTest) {
	start := time.Now()
	r.ID = ex.ID
	defer func() {
		r.Elapsed = jsonconv.Duration(time.Since(start))
		r.Passed = r.Problem == ""
		msg := "passed"
		var err error
		if !r.Passed {
			msg, err = r.Problem, fmt.Errorf("%s", r.Problem)
		}
		report(progress, Step{Phase: PhaseSelfTest, Exercise: ex.ID, Message: msg, Done: true, Err: err, Elapsed: r.Elapsed.Duration()})
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
	if err := e.runSteps(ctx, PhaseBefore, ex.ID, ex.Before, a, progress); err != nil {
		r.Problem = problem("the exercise's starting state could not be made", Report{}, err)
		return r
	}
	if r.Fault, err = e.Chaos(ctx, l, a, progress); err != nil {
		r.Problem = problem("the chaos failed", r.Fault, err)
		return r
	}
	if r.Broken, err = e.Check(ctx, l, a, CheckOptions{Window: BrokenWindow, Progress: progress}); err != nil || r.Broken.Passed {
		r.Problem = problem("the goals passed on the broken state, before any repair", r.Broken, err)
		return r
	}
	a.T1 = time.Time{} // a failed check must not have set it; be sure
	for i := range ex.Shortcuts {
		sc := e.selfTestShortcut(ctx, l, ex, &ex.Shortcuts[i], a, learner, progress)
		r.Shortcuts = append(r.Shortcuts, sc)
		if sc.Problem != "" {
			r.Problem = fmt.Sprintf("shortcut %s: %s", sc.ID, sc.Problem)
			return r
		}
	}
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

// selfTestShortcut applies a shortcut on the broken state of attempt a as
// the learner would (its steps run with learner's identity), expects the
// API server or the goals to refuse it, then undoes it and the exercise
// (Reset) and runs the chaos again, so the next step starts from the
// broken state.
func (e *Engine) selfTestShortcut(ctx context.Context, l *lab.Lab, ex *lab.Exercise, sc *lab.Shortcut, a *Attempt, learner *Engine, progress Progress) (r ShortcutSelfTest) {
	start := time.Now()
	r.ID = sc.ID
	defer func() {
		r.Elapsed = jsonconv.Duration(time.Since(start))
		msg, err := "refused by the goals", error(nil)
		switch {
		case r.Problem != "":
			msg, err = r.Problem, fmt.Errorf("%s", r.Problem)
		case r.API != "":
			msg = "refused by the API server: a learner cannot take it (" + r.API + ")"
		}
		report(progress, Step{Phase: PhaseShortcut, Exercise: ex.ID, Kind: sc.ID, Message: msg, Done: true, Err: err, Elapsed: r.Elapsed.Duration()})
	}()
	if err := learner.runSteps(ctx, PhaseShortcut, ex.ID, sc.Steps, a, apiRefusals(progress)); err != nil {
		if !apierrors.IsForbidden(err) {
			r.Problem = fmt.Sprintf("could not be applied: %v", err)
			return r
		}
		step, _, _ := strings.Cut(err.Error(), ": ")
		r.Refused, r.API = true, strings.TrimPrefix(step, PhaseShortcut+" ")+": "+refusal(err)
		if err := e.undoShortcut(ctx, l, ex, sc, a, progress); err != nil {
			r.Problem = fmt.Sprintf("refused by the API server, but the exercise could not be set up again after it: %v", err)
		}
		return r
	}
	var err error
	r.Goals, err = e.Check(ctx, l, a, CheckOptions{Timeout: ShortcutWindow, Progress: progress})
	a.T1 = time.Time{}
	switch {
	case err != nil:
		r.Problem = fmt.Sprintf("the goals could not be run: %v", err)
		return r
	case r.Goals.Passed:
		r.Problem = fmt.Sprintf("wrongly passed the goals (%s)", sc.Why)
		return r
	}
	for _, k := range sc.RefusedBy {
		if res, ok := resultOf(r.Goals, k); ok && res.Passed {
			r.Problem = fmt.Sprintf("%s passed it (%s); it is the check meant to refuse it (%s)", k, res.Reason, sc.Why)
			return r
		}
	}
	r.Refused = true
	if err := e.undoShortcut(ctx, l, ex, sc, a, progress); err != nil {
		r.Problem = fmt.Sprintf("refused, but the exercise could not be set up again after it: %v", err)
	}
	return r
}

// undoShortcut deletes what the shortcut's applyManifest steps made, runs
// its undo steps (the rest is the operator's or Reset's to put back),
// resets the exercise and runs its chaos again.
func (e *Engine) undoShortcut(ctx context.Context, l *lab.Lab, ex *lab.Exercise, sc *lab.Shortcut, a *Attempt, progress Progress) error {
	for i := len(sc.Steps) - 1; i >= 0; i-- {
		if m, ok := sc.Steps[i].Params.(*lab.ApplyManifest); ok {
			if err := e.deleteManifest(ctx, m); err != nil {
				return err
			}
		}
	}
	if err := e.runSteps(ctx, PhaseShortcut, ex.ID, sc.Undo, a, progress); err != nil {
		return err
	}
	if err := e.Reset(ctx, l, a, progress); err != nil {
		return err
	}
	if len(ex.Chaos) == 0 {
		return nil
	}
	_, err := e.Chaos(ctx, l, a, progress)
	return err
}

// apiRefusals passes the steps of a shortcut on to progress, a step the
// API server refused as done, saying so: a refusal is the expected end of
// a shortcut a learner cannot take, not a failure.
func apiRefusals(progress Progress) Progress {
	return func(s Step) {
		if s.Done && apierrors.IsForbidden(s.Err) {
			s.Message = "refused by the API server: " + refusal(s.Err)
			s.Err = nil
		}
		report(progress, s)
	}
}

// refusal is the reason the API server gave, in one line: an admission
// policy's message, or RBAC's first line.
func refusal(err error) string {
	msg := err.Error()
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		msg = status.Status().Message
	}
	if _, after, ok := strings.Cut(msg, "denied request: "); ok {
		msg = after
	}
	line, _, _ := strings.Cut(msg, "\n")
	return strings.TrimSuffix(line, ":")
}

// resultOf returns the first failed result of kind in r, or else the
// first result of it.
func resultOf(r Report, kind string) (Result, bool) {
	var found *Result
	for i := range r.Results {
		if r.Results[i].Kind != kind {
			continue
		}
		if !r.Results[i].Passed {
			return r.Results[i], true
		}
		if found == nil {
			found = &r.Results[i]
		}
	}
	if found == nil {
		return Result{}, false
	}
	return *found, true
}
