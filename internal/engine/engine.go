package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/rest"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/locale"
)

// Target is the cluster an Engine works on.
type Target struct {
	// Config reaches the cluster's API server with admin rights.
	Config *rest.Config
	// Provider and Cluster name the cluster for what the API cannot do:
	// installing the operator and, on the embedded provider, starting and
	// stopping its host process. Optional when Config reaches a cluster
	// oplab does not manage (then installOperator, stopOperator and
	// startOperator act through the API only).
	Provider *cluster.Provider
	Cluster  string
	// BinDir holds pg-operator and hostpod, which runs it as a host process.
	BinDir string
	// Logs is where the operator's log is read from; by default its host
	// process's log files on providers that run it so, else its pod's log.
	Logs LogSource
	// Logger receives the engine's debug messages; discarded by default.
	Logger *slog.Logger
}

// Phases reported to a Progress function.
const (
	PhaseSetup       = "setup"
	PhaseSteadyState = "steadyState"
	PhaseChaos       = "chaos"
	PhaseFault       = "faultConfirmed"
	PhaseGoals       = "goals"
	PhaseSolution    = "solution"
	PhaseReset       = "reset"
	PhaseSelfTest    = "selftest"
	PhaseShortcut    = "shortcut"
	PhaseBefore      = "before"
)

// Step reports one action or check of a long operation as it starts
// (Done false) and as it ends (Done true, Err set on failure).
type Step struct {
	Phase    string // one of the Phase constants
	Exercise string // exercise id; empty for setup
	Index    int    // position in its phase, from 0
	Total    int    // number of steps in the phase
	Kind     string // action or check kind
	Message  string // what is being done, or its result, in one line
	Done     bool
	Err      error
	Elapsed  time.Duration // set when Done
}

// Progress receives Steps; nil discards them. It is called from the
// goroutine of the engine call it was given to.
type Progress func(Step)

// Attempt is one try at an exercise: what the engine recorded when it began,
// when its fault took effect and when it was repaired. It is plain data for
// the caller to persist (JSON) and pass back to later calls.
type Attempt struct {
	Lab      string    `json:"lab"`
	Exercise string    `json:"exercise"`
	Started  time.Time `json:"started"`
	// T0 is when the chaos was confirmed in effect; zero before chaos and
	// for exercises without chaos.
	T0 time.Time `json:"t0,omitzero"`
	// T1 is when every goal first passed; zero until then.
	T1 time.Time `json:"t1,omitzero"`
	// Baseline is the state of the target when the attempt began; Reset
	// returns to it.
	Baseline Baseline `json:"baseline"`
	// Deleted is the pod deletePod deleted (a leader, a master), which a
	// changed patroniLeader or sentinelMaster may not find again.
	Deleted string `json:"deleted,omitempty"`
	// PrimaryAtT0 is the primary just before chaos ran (primaryChanged
	// compares with it; with no chaos, Baseline.Primary is used).
	PrimaryAtT0 string `json:"primaryAtT0,omitempty"`
	// ClusterAtT0 is the PostgresCluster's UID just before chaos ran
	// (sameCluster compares with it; with no chaos, Baseline.ClusterUID).
	ClusterAtT0 string `json:"clusterAtT0,omitempty"`
	// Away are the spans the attempt's session slept (package session:
	// nobody looked at it, and its cluster was frozen or stopped). The
	// learner was away and the cluster stood still: the attempt's clocks
	// (the time to recovery, the exercise's time limit) do not count them.
	Away []Span `json:"away,omitempty"`
}

// Span is a stretch of time, From up to To.
type Span struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// AwayBetween is how much of the stretch from..to the attempt's session
// slept.
func (a *Attempt) AwayBetween(from, to time.Time) time.Duration {
	var d time.Duration
	for _, s := range a.Away {
		lo, hi := s.From, s.To
		if lo.Before(from) {
			lo = from
		}
		if hi.After(to) {
			hi = to
		}
		if hi.After(lo) {
			d += hi.Sub(lo)
		}
	}
	return d
}

// Baseline is the part of the target's state an attempt can be reset to.
type Baseline struct {
	// ClusterExists is false when the lab's PostgresCluster did not exist.
	ClusterExists bool   `json:"clusterExists"`
	ClusterUID    string `json:"clusterUID,omitempty"`
	Replicas      int32  `json:"replicas,omitempty"`
	StorageClass  string `json:"storageClass,omitempty"`
	Primary       string `json:"primary,omitempty"`
	OperatorReady bool   `json:"operatorReady"`
}

// Recovery is T1 − T0 less the time the session slept in between (Away),
// or zero while either is unknown.
func (a *Attempt) Recovery() time.Duration {
	if a.T0.IsZero() || a.T1.IsZero() {
		return 0
	}
	return a.T1.Sub(a.T0) - a.AwayBetween(a.T0, a.T1)
}

// since is when evidence starts to count: T0 when there was chaos, else
// the attempt's start.
func (a *Attempt) since() time.Time {
	if !a.T0.IsZero() {
		return a.T0
	}
	return a.Started
}

// CheckOptions tune how checks are run.
type CheckOptions struct {
	// Timeout caps each check's time budget; zero keeps the check's own.
	// A short cap gives a quick verdict (oplab lab check), the full budget
	// waits for a repair to settle (self-test).
	Timeout time.Duration
	// Window, when set, caps each check's budget in real time, not at the
	// provider's pace (see RealContainersPace): for how long a state must
	// hold, such as the fault right after the chaos, which does not last
	// longer because pods start slowly.
	Window time.Duration
	// Interval between polls of a check; DefaultInterval when zero.
	Interval time.Duration
	// Held says the checks were seen to pass their passes in a row already
	// (a session's Watcher saw the goals hold): a check whose first
	// evaluation passes is then done, without waiting out the others of a
	// run; one whose first fails needs its whole run again, as ever.
	Held bool
	// Progress, when set, hears of each check as it ends.
	Progress Progress
}

// DefaultInterval is the time between two polls of a check.
const DefaultInterval = 200 * time.Millisecond

// Result is the verdict of one check. It is the one type of it: the
// session records it in its timeline and hands it to the front ends as it
// is, so its JSON is docs/api.md's CheckOutcome.
type Result struct {
	Kind   string `json:"kind"`
	Weight int    `json:"weight"`
	Passed bool   `json:"passed"`
	// Reason says in one line why the check passed or failed, in words a
	// learner understands (English); Explain is the lab's own bilingual
	// explanation, shown on failure when the lab gives one.
	Reason  string            `json:"reason"`
	Explain locale.Text       `json:"explain,omitzero"`
	Polls   int               `json:"polls"`
	Elapsed jsonconv.Duration `json:"elapsedMs"`
}

// UnmarshalJSON reads a Result, and the time of one that an oplab before
// elapsedMs stored in its timeline: nanoseconds, under "elapsed".
func (r *Result) UnmarshalJSON(b []byte) error {
	type plain Result
	var v struct {
		plain
		Nanos *time.Duration `json:"elapsed"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("check result: %w", err)
	}
	*r = Result(v.plain)
	if v.Nanos != nil && r.Elapsed == 0 {
		r.Elapsed = jsonconv.Duration(*v.Nanos)
	}
	return nil
}

// Report is the verdict of a set of checks (a steady state, a fault,
// goals), recorded and handed to the front ends as it is (docs/api.md's
// Report).
type Report struct {
	Results []Result  `json:"results"`
	Score   int       `json:"score"` // weights of the passed checks
	Total   int       `json:"total"` // weights of all checks
	Passed  bool      `json:"passed"`
	At      time.Time `json:"at"`
	// Recovery is T1 − T0 for a goals report that passed after chaos. It
	// is left out of the JSON: the answer to a check carries it once
	// (session.CheckResult), and the timeline's recovered event.
	Recovery time.Duration `json:"-"`
}

// Hint is a hint chosen from the evidence, and why.
type Hint struct {
	Index  int // position in the exercise's hints; show the next one after it
	Hint   *lab.Hint
	Unlock lab.Unlock // what made it due
	// Next is what the first hint not shown yet (after this one when one
	// is due) waits for; nil when none is left.
	Next *lab.Wait
}

// Errors a caller can test for with errors.Is.
var (
	// ErrUnknownExercise: the lab has no exercise with that id.
	ErrUnknownExercise = errors.New("unknown exercise")
	// ErrNotSteady: the steady-state gate did not pass, so chaos was not run.
	ErrNotSteady = errors.New("steady state not reached")
	// ErrFaultNotConfirmed: chaos ran but its fault was not seen in effect.
	ErrFaultNotConfirmed = errors.New("fault not confirmed")
	// ErrUnsupported: the target cannot do what an action needs.
	ErrUnsupported = errors.New("not supported by this target")
)
