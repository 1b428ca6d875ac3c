package engine

import (
	"context"
	"errors"
	"time"

	"k8s.io/client-go/kubernetes"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/quiz"
)

var errTODO = errors.New("not implemented yet")

// LogSource reads the operator's log lines written at or after since.
type LogSource interface {
	Lines(ctx context.Context, since time.Time) ([]string, error)
}

// FileLogs reads CRI-format log files (the operator's host process log and
// the previous run's), oldest first.
type FileLogs []string

// Lines implements LogSource.
func (f FileLogs) Lines(ctx context.Context, since time.Time) ([]string, error) { return nil, errTODO }

// PodLogs reads the log of the operator's pod through the API server.
type PodLogs struct{ Client kubernetes.Interface }

// Lines implements LogSource.
func (p PodLogs) Lines(ctx context.Context, since time.Time) ([]string, error) { return nil, errTODO }

// Setup runs the lab's setup actions in order.
func (e *Engine) Setup(ctx context.Context, l *lab.Lab, progress Progress) error { return errTODO }

// Begin starts an attempt at exercise id, recording the baseline.
func (e *Engine) Begin(ctx context.Context, l *lab.Lab, id string) (*Attempt, error) { return nil, errTODO }

// SteadyState runs the exercise's steady-state gate.
func (e *Engine) SteadyState(ctx context.Context, l *lab.Lab, a *Attempt, o CheckOptions) (Report, error) {
	return Report{}, errTODO
}

// Chaos runs the chaos actions, then waits for faultConfirmed; sets a.T0.
func (e *Engine) Chaos(ctx context.Context, l *lab.Lab, a *Attempt, progress Progress) (Report, error) {
	return Report{}, errTODO
}

// Check runs the goal checks; sets a.T1 when they all pass.
func (e *Engine) Check(ctx context.Context, l *lab.Lab, a *Attempt, o CheckOptions) (Report, error) {
	return Report{}, errTODO
}

// RunChecks runs any checks in the context of attempt a.
func (e *Engine) RunChecks(ctx context.Context, a *Attempt, checks []lab.Check, o CheckOptions) (Report, error) {
	return Report{}, errTODO
}

// Evidence gathers operator log lines and events since T0 (or the start).
func (e *Engine) Evidence(ctx context.Context, l *lab.Lab, a *Attempt) (lab.Observed, error) {
	return lab.Observed{}, errTODO
}

// NextHint returns the hint due after the first shown hints, if any.
func (e *Engine) NextHint(ctx context.Context, l *lab.Lab, a *Attempt, shown int) (Hint, bool, error) {
	return Hint{}, false, errTODO
}

// Solve runs the exercise's reference solution.
func (e *Engine) Solve(ctx context.Context, l *lab.Lab, a *Attempt, progress Progress) error {
	return errTODO
}

// Reset undoes the exercise's chaos and returns to the attempt's baseline.
func (e *Engine) Reset(ctx context.Context, l *lab.Lab, a *Attempt, progress Progress) error {
	return errTODO
}

// Teardown undoes a whole lab so another can run on the same cluster.
func (e *Engine) Teardown(ctx context.Context, l *lab.Lab, progress Progress) error { return errTODO }

// Answer implements quiz.ClusterAnswers.
func (e *Engine) Answer(ctx context.Context, q quiz.Query) (string, error) { return "", errTODO }

var _ quiz.ClusterAnswers = (*Engine)(nil)

// SelfTestReport is the result of SelfTest.
type SelfTestReport struct {
	Lab       string             `json:"lab"`
	Exercises []ExerciseSelfTest `json:"exercises"`
	Passed    bool               `json:"passed"`
	Elapsed   time.Duration      `json:"elapsed"`
}

// ExerciseSelfTest is the self-test of one exercise.
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

// SelfTest runs lab l's setup, then for each exercise checks the steady
// state, runs the chaos, checks that every goal fails, runs the solution and
// checks that every goal passes.
func SelfTest(ctx context.Context, l *lab.Lab, t Target, progress Progress) (*SelfTestReport, error) {
	return nil, errTODO
}

// SelfTest is SelfTest on e's target.
func (e *Engine) SelfTest(ctx context.Context, l *lab.Lab, progress Progress) (*SelfTestReport, error) {
	return nil, errTODO
}
