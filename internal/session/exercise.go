package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/store"
)

// open loads a session, locks it, settles what an oplab that is gone left
// half-done on it, and checks that it is live and ready for exercises. The
// caller must call the returned unlock.
func (m *Manager) open(ctx context.Context, id string, progress Progress) (*live, func(), error) {
	if rec, err := m.o.Store.Session(ctx, id); err == nil && State(rec.State) == Provisioning {
		// Do not wait for a start that is under way.
		unlock, ok := m.tryLock(id)
		if !ok {
			return nil, nil, fmt.Errorf("session %s: %w (still provisioning)", id, ErrNotReady)
		}
		unlock()
	}
	unlock, err := m.lock(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	s, err := m.load(ctx, id)
	if err == nil {
		err = m.settle(ctx, s, progress, false)
	}
	if err == nil {
		m.seen(ctx, id)
		err = m.wakeLocked(ctx, s, progress)
	}
	if err != nil {
		unlock()
		return nil, nil, err
	}
	if err := s.exercising(); err != nil {
		unlock()
		return nil, nil, err
	}
	return s, unlock, nil
}

// because gives the reason of a failed session, for an error message.
func because(s *live) string {
	if s.state() != Failed || s.work.Error == "" {
		return ""
	}
	return " (" + s.work.Error + ")"
}

// checkCurrent returns an ErrOutOfOrder error when want names an exercise
// other than the current one.
func checkCurrent(s *live, want string) error {
	if want == "" || want == s.exerciseID() {
		return nil
	}
	if exerciseIndex(s.lab, want) < 0 {
		return fmt.Errorf("lab %s has no exercise %q: %w", s.lab.ID, want, engine.ErrUnknownExercise)
	}
	return fmt.Errorf("exercise %q is not the current one (%q); exercises are done in order: %w", want, s.exerciseID(), ErrOutOfOrder)
}

// Chaos starts the current exercise (or the one named, which must be the
// current one): it checks the steady state, injects the exercise's chaos
// and waits until its fault is confirmed, which is T0. An exercise without
// chaos just starts. The session moves to in-exercise.
func (m *Manager) Chaos(ctx context.Context, id, exercise string, progress Progress) (*Status, error) {
	s, unlock, err := m.open(ctx, id, progress)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := checkCurrent(s, exercise); err != nil {
		return nil, err
	}
	ex := s.exercise()
	if err := s.refuse(ActChaos); err != nil {
		return nil, err
	}
	e, err := m.engine(&s.rec)
	if err != nil {
		return nil, err
	}
	if len(ex.Chaos) > 0 {
		// Recorded before anything acts, so that a chaos killed half-way is
		// rolled back by the next command.
		if err := m.intend(ctx, s, OpChaos, ""); err != nil {
			return nil, err
		}
	}
	if s.work.Attempt == nil || s.state() == Ready {
		if err := m.begin(ctx, s, e, progress); err != nil {
			return nil, errors.Join(err, m.unintend(ctx, s))
		}
	}
	if len(ex.Chaos) == 0 {
		return m.status(ctx, s)
	}
	rep := m.stepReporter(ctx, s.rec.ID, ex.ID, progress)
	fault, err := e.Chaos(ctx, s.lab, s.work.Attempt, engineProgress(rep))
	data := ChaosData{T0: s.work.Attempt.T0, Fault: fault}
	s.work.Pending = nil // cleared with the outcome
	if err != nil {
		// Chaos may have run in part: the exercise is under way either
		// way, and reset (or chaos again) picks it up.
		data.Error = err.Error()
		ev := newEvent(KindChaos, ex.ID, "chaos: "+err.Error(), data)
		if serr := m.move(ctx, s, InExercise, "chaos ran, fault not confirmed", progress, ev); serr != nil {
			return nil, errors.Join(err, serr)
		}
		return nil, fmt.Errorf("exercise %s: %w", ex.ID, err)
	}
	ev := newEvent(KindChaos, ex.ID, "fault confirmed at T0 "+s.work.Attempt.T0.Format(time.TimeOnly), data)
	if err := m.move(ctx, s, InExercise, "chaos injected", progress, ev); err != nil {
		return nil, err
	}
	return m.status(ctx, s)
}

// begin starts an attempt at the current exercise and runs its
// steady-state gate; a gate that does not pass is an engine.ErrNotSteady
// error, and the session stays ready.
func (m *Manager) begin(ctx context.Context, s *live, e *engine.Engine, progress Progress) error {
	ex := s.exercise()
	a, err := e.Begin(ctx, s.lab, ex.ID)
	if err != nil {
		return err
	}
	rep := m.stepReporter(ctx, s.rec.ID, ex.ID, progress)
	if len(ex.SteadyState) > 0 {
		steady, err := e.SteadyState(ctx, s.lab, a, engine.CheckOptions{Progress: engineProgress(rep)})
		if err != nil {
			return err
		}
		ev := newEvent(KindSteady, ex.ID, verdict("steady state", steady), steady)
		if err := m.o.Store.AppendEvents(context.WithoutCancel(ctx), s.rec.ID, ev); err != nil {
			return err
		}
		progress.report(ev, nil)
		if !steady.Passed {
			return fmt.Errorf("exercise %s: %w: %s (wait for the cluster to settle, or reset the exercise)", ex.ID, engine.ErrNotSteady, firstFailure(steady))
		}
	}
	s.work = work{Attempt: a, Pending: s.work.Pending}
	ev := newEvent(KindExercise, ex.ID, "exercise "+ex.ID+" started", AttemptData{Attempt: a})
	if len(ex.Chaos) == 0 {
		return m.move(ctx, s, InExercise, "exercise "+ex.ID+" started", progress, ev)
	}
	return m.save(ctx, s, progress, ev)
}

// CheckResult is the outcome of Check.
type CheckResult struct {
	Exercise string        `json:"exercise"`
	Report   engine.Report `json:"report"`
	// Late is true when the goals were checked after the exercise's time
	// limit had run out.
	Late bool `json:"late,omitempty"`
	// Passed is true when every goal passed; the session then moved on to
	// the next exercise, or completed.
	Passed bool `json:"passed"`
	// Recovery is T1 − T0 when the exercise had chaos and passed.
	Recovery jsonconv.Duration `json:"recoveryMs,omitempty"`
	// T1 is when the goals came to hold, found as T1Source says: watched
	// by a Watcher, from the cluster's evidence, or, when neither tells,
	// the moment of this check. T1Evidence lists the evidence.
	T1         time.Time `json:"t1,omitzero"`
	T1Source   string    `json:"t1Source,omitempty"`
	T1Evidence []string  `json:"t1Evidence,omitempty"`
	Status     *Status   `json:"status"`
}

// Check runs the current exercise's goal checks, records the result, and
// when every goal passes records T1 and the time to recovery and moves the
// session on. An exercise without chaos is started first if it has not
// been; one with chaos must have had it (ErrOutOfOrder otherwise).
func (m *Manager) Check(ctx context.Context, id string, progress Progress) (*CheckResult, error) {
	s, unlock, err := m.open(ctx, id, progress)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ex := s.exercise()
	if err := s.refuse(ActCheck); err != nil {
		return nil, err
	}
	e, err := m.engine(&s.rec)
	if err != nil {
		return nil, err
	}
	if s.state() == Ready {
		if err := m.begin(ctx, s, e, progress); err != nil {
			return nil, err
		}
	}
	a := s.work.Attempt
	rep := m.stepReporter(ctx, s.rec.ID, ex.ID, progress)
	held, records := m.heldBefore(ctx, e, s, ex)
	report, err := e.Check(ctx, s.lab, a, engine.CheckOptions{Timeout: m.o.CheckTimeout, Held: held, Progress: engineProgress(rep)})
	if err != nil {
		return nil, err
	}
	t1 := m.settleT1(ctx, e, s, &report, records)
	res := &CheckResult{Exercise: ex.ID, Report: report, Passed: report.Passed, Recovery: jsonconv.Millis(report.Recovery),
		T1: t1.At, T1Source: t1.Source, T1Evidence: t1.Evidence}
	res.Late = ex.TimeLimit.Duration > 0 && report.At.Sub(since(a))-a.AwayBetween(since(a), report.At) > ex.TimeLimit.Duration
	if err := m.recordCheck(ctx, s, ex, report, res.Late, progress); err != nil {
		return nil, err
	}
	if res.Status, err = m.status(ctx, s); err != nil {
		return nil, err
	}
	return res, nil
}

// heldBefore says whether the goals of s's exercise ex are known to have
// held for a run of passes already, so that a Check needs one more pass of
// each (engine.CheckOptions.Held): a Watcher saw them hold in a row (T1
// watched, not cleared since); or, after chaos, the cluster's records show
// each goal holding since a change longer ago than a run of passes takes,
// and a second more, the precision of records kept to the second
// (Engine.RecoveredAt: what a change would have left, it shows). A goal
// that fails its one more pass needs its whole run, so records read while
// a goal fails decide nothing; they are returned for settleT1, which
// places T1 by them only when every goal held at its first evaluation,
// right after they were read.
func (m *Manager) heldBefore(ctx context.Context, e *engine.Engine, s *live, ex *lab.Exercise) (bool, *engine.Recovered) {
	a := s.work.Attempt
	if s.work.T1Source == T1Watched && !a.T1.IsZero() {
		return true, nil
	}
	if len(ex.Chaos) == 0 || a.T0.IsZero() {
		return false, nil
	}
	now := time.Now()
	r, ok, err := e.RecoveredAt(ctx, s.lab, a, now)
	if err != nil || !ok {
		return false, nil
	}
	_, need := oncePerPoll(ex.Goals)
	return now.Sub(r.At) >= time.Duration(need-1)*engine.DefaultInterval+time.Second, &r
}

// recordCheck stores the result of a check and, when it passed, moves the
// session to the next exercise or completes it.
func (m *Manager) recordCheck(ctx context.Context, s *live, ex *lab.Exercise, report engine.Report, late bool, progress Progress) error {
	ctx = context.WithoutCancel(ctx)
	checkEv := newEvent(KindCheck, ex.ID, verdict("goals", report), CheckData{Report: report, Late: late})
	r := &store.Result{SessionID: s.rec.ID, Kind: store.ResultExercise, Item: ex.ID, Score: report.Score, Total: report.Total,
		Passed: report.Passed, Recovery: report.Recovery, At: report.At, Data: checkEv.Data}
	if err := m.o.Store.PutResult(ctx, r); err != nil {
		return err
	}
	if !report.Passed {
		return m.save(ctx, s, progress, checkEv)
	}
	a := s.work.Attempt
	msg := "every goal passed"
	if report.Recovery > 0 {
		msg = fmt.Sprintf("recovered: time to recovery %s", report.Recovery.Round(time.Millisecond))
	}
	done := newEvent(KindRecovered, ex.ID, msg, AttemptData{Attempt: a, Recovery: report.Recovery, T1Source: s.work.T1Source})
	s.rec.Exercise++
	s.work = work{}
	if s.exercise() == nil {
		return m.move(ctx, s, Completed, "every exercise passed", progress, checkEv, done)
	}
	return m.move(ctx, s, Ready, "next exercise: "+s.exerciseID(), progress, checkEv, done)
}

// verdict sums up a report in one line.
func verdict(what string, r engine.Report) string {
	score := ""
	if r.Total > 0 {
		score = fmt.Sprintf(" (%d/%d)", r.Score, r.Total)
	}
	if r.Passed {
		return what + " passed" + score
	}
	return fmt.Sprintf("%s failed%s: %s", what, score, firstFailure(r))
}

func firstFailure(r engine.Report) string {
	for _, res := range r.Results {
		if !res.Passed {
			return res.Kind + ": " + res.Reason
		}
	}
	return "no check failed"
}

// since is when an attempt's clock started: T0, or its start without chaos.
func since(a *engine.Attempt) time.Time {
	if !a.T0.IsZero() {
		return a.T0
	}
	return a.Started
}
