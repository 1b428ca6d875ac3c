package session

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/store"
)

// How T1, the moment an exercise's goals came to hold, was found.
const (
	// T1Watched: a Watcher polled the goals and saw them come to hold.
	T1Watched = "watched"
	// T1Evidence: nothing watched; the cluster's records (the operator's
	// events and status, transition times) show since when they hold.
	T1Evidence = "evidence"
	// T1Check: neither tells; the moment of the check is all there is.
	T1Check = "check"
)

// settleT1 decides T1 for a check: for a passing check, the moment a
// Watcher saw the goals come to hold, else the earliest the cluster's
// evidence supports, else the moment of the check; a failing check clears
// what a Watcher saw, since the goals do not hold after all.
func (m *Manager) settleT1(ctx context.Context, e *engine.Engine, s *live, report *engine.Report, records *engine.Recovered) settled {
	a := s.work.Attempt
	if !report.Passed {
		a.T1, s.work.T1Source = time.Time{}, ""
		return settled{}
	}
	t := settled{At: report.At, Source: T1Check}
	switch {
	case s.work.T1Source == T1Watched && !a.T1.IsZero() && !a.T1.After(report.At):
		t.At, t.Source = a.T1, T1Watched
	case records != nil && firstPolls(report):
		// Read right before the check, whose goals all held at their
		// first evaluation: the earliest moment the records support.
		t.At, t.Source, t.Evidence = records.At, T1Evidence, records.Evidence
	default:
		r, ok, err := e.RecoveredAt(ctx, s.lab, a, report.At)
		if err != nil {
			m.log.Warn("read the evidence of recovery", "session", s.rec.ID, "err", err)
		}
		if ok && err == nil {
			t.At, t.Source, t.Evidence = r.At, T1Evidence, r.Evidence
		}
	}
	a.T1, s.work.T1Source = t.At, t.Source
	report.Recovery = a.Recovery()
	return t
}

// firstPolls reports whether every check of r passed at its first
// evaluation.
func firstPolls(r *engine.Report) bool {
	for _, res := range r.Results {
		if !res.Passed || res.Polls != 1 {
			return false
		}
	}
	return true
}

// settled is the T1 settleT1 decided, with how it was found.
type settled struct {
	At       time.Time
	Source   string
	Evidence []string
}

// DefaultWatchInterval is how often a Watcher polls the goals.
const DefaultWatchInterval = 250 * time.Millisecond

// DefaultHeldInterval is how often a Watcher polls the goals of a session
// whose T1 it has recorded: the moment is known, and what is left to see
// is the goals ceasing to hold.
const DefaultHeldInterval = 2 * time.Second

// WatchOptions configure a Watcher.
type WatchOptions struct {
	// Learner limits the watch to one learner's sessions; all when empty.
	Learner string
	// Interval between two polls; DefaultWatchInterval when zero.
	Interval time.Duration
	// HeldInterval is the least time between two polls of a session whose
	// goals the Watcher saw come to hold (its T1 recorded);
	// DefaultHeldInterval when zero.
	HeldInterval time.Duration
}

// Watcher polls, in the background, the goals of the sessions in exercise
// whose fault was confirmed, and records on each attempt the first moment
// its goals all held (T1, watched), so that the time to recovery is when
// the cluster recovered, not when the learner ran the check. Goals that
// stop holding clear the record. The web server keeps one running; a CLI
// command that waits (oplab logs -f) runs one while it waits.
//
// It is background work beside the learners' own, and a class breaking
// its clusters at once makes a lot of it, so it polls no more than it
// must: a session whose T1 it recorded only every HeldInterval (the
// moment is known; a break shorter than that may go unseen, as one
// shorter than Interval always could, and T1 then stays the first
// recovery's), and none that is busy — a learner's Check evaluates the
// same goals itself, and settles T1 from the cluster's evidence when the
// Watcher has not seen it yet.
//
// Start starts one goroutine; Stop ends it and returns once it has ended.
type Watcher struct {
	m *Manager
	o WatchOptions

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}

	// runs holds, per session, the first moment of the current run of
	// polls in which every goal held, and the run's length; only the
	// watching goroutine uses it.
	runs map[string]run
}

type run struct {
	attempt time.Time // the attempt's start, to tell attempts apart
	first   time.Time
	n       int
	polled  time.Time // the last poll's
	failed  time.Time // the last poll's that saw a goal fail
}

// Watcher returns a Watcher of the sessions o selects; it does nothing
// until Start.
func (m *Manager) Watcher(o WatchOptions) *Watcher {
	if o.Interval <= 0 {
		o.Interval = DefaultWatchInterval
	}
	if o.HeldInterval <= 0 {
		o.HeldInterval = DefaultHeldInterval
	}
	return &Watcher{m: m, o: o, runs: map[string]run{}}
}

// Start starts watching until ctx ends or Stop is called. Starting a
// Watcher that runs does nothing.
func (w *Watcher) Start(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil {
		return
	}
	ctx, w.cancel = context.WithCancel(ctx)
	done := make(chan struct{})
	w.done = done
	go func() {
		defer close(done)
		t := time.NewTicker(w.o.Interval)
		defer t.Stop()
		for {
			w.Poll(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// Stop stops the watching goroutine and waits for it to end.
func (w *Watcher) Stop() {
	w.mu.Lock()
	cancel, done := w.cancel, w.done
	w.cancel, w.done = nil, nil
	w.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// Poll polls the goals of every watched session once. Start calls it
// every interval; call it directly only on a Watcher that is not started.
func (w *Watcher) Poll(ctx context.Context) {
	list, err := w.m.o.Store.Sessions(ctx, store.Filter{Learner: w.o.Learner, States: []string{string(InExercise)}})
	if err != nil {
		w.m.log.Warn("watch: list sessions", "err", err)
		return
	}
	seen := map[string]bool{}
	for _, rec := range list {
		seen[rec.ID] = true
		w.pollOne(ctx, rec)
	}
	for id := range w.runs {
		if !seen[id] {
			delete(w.runs, id)
		}
	}
}

// pollOne evaluates the goals of one session once, each check a single
// time, and records or clears T1 when the run of passes says so.
func (w *Watcher) pollOne(ctx context.Context, rec store.Session) {
	var wk work
	if json.Unmarshal(rec.Data, &wk) != nil || wk.Attempt == nil || wk.Pending != nil || wk.Asleep != nil {
		return // asleep, the cluster stands still: nothing to see
	}
	a := wk.Attempt
	l, err := w.m.Lab(rec.Lab)
	if err != nil || rec.Exercise < 0 || rec.Exercise >= len(l.Exercises) {
		return
	}
	ex := &l.Exercises[rec.Exercise]
	if ex.ID != a.Exercise || len(ex.Chaos) > 0 && a.T0.IsZero() {
		return // the fault is not confirmed: recovery cannot count yet
	}
	if l.LearnerWritesController() {
		// Its checks are scenarios that make and change objects and wait
		// for the learner's controller: they run when the learner asks,
		// never in the background; and without chaos there is no
		// recovery to time.
		return
	}
	r := w.runs[rec.ID]
	if !r.attempt.Equal(a.Started) {
		r = run{attempt: a.Started}
	}
	if wk.T1Source == T1Watched && time.Since(r.polled) < w.o.HeldInterval || w.m.busy(rec.ID) {
		return
	}
	e, err := w.m.engine(&rec)
	if err != nil {
		return
	}
	goals, need := oncePerPoll(ex.Goals)
	for {
		rep, err := e.RunChecks(ctx, a, goals, engine.CheckOptions{Timeout: time.Nanosecond})
		if err != nil {
			return
		}
		r.polled = time.Now()
		if !rep.Passed {
			w.runs[rec.ID] = run{attempt: a.Started, polled: r.polled, failed: rep.At}
			if wk.T1Source == T1Watched {
				w.record(ctx, rec.ID, a.Started, time.Time{})
			}
			return
		}
		if r.n == 0 {
			r.first = rep.At
		}
		r.n++
		w.runs[rec.ID] = r
		if r.n >= need {
			// Once recorded, the moment stands while the goals hold: a
			// Watcher started later sees only a later run of the same
			// stretch.
			if wk.T1Source != T1Watched {
				w.record(ctx, rec.ID, a.Started, placed(ctx, e, l, a, r))
			}
			return
		}
		// A run has begun: see it through now, a poll every Interval,
		// rather than a poll a round of every session, which takes
		// seconds when a class has failed over at once. It is as many
		// polls either way, and T1 is recorded before the learner checks.
		select {
		case <-ctx.Done():
			return
		case <-time.After(w.o.Interval):
		}
	}
}

// placed is T1 for run r, whose passes began with the poll at r.first: the
// earliest moment the cluster's records support (Engine.RecoveredAt) when
// that is after the last poll that saw a goal fail, else r.first. When a
// class has failed over at once, a sweep of its sessions takes seconds,
// and the first poll to pass may come well after the recovery; the
// records place it, as they do for a check with nothing watching, and the
// failed poll bounds them.
func placed(ctx context.Context, e *engine.Engine, l *lab.Lab, a *engine.Attempt, r run) time.Time {
	rec, ok, err := e.RecoveredAt(ctx, l, a, r.first)
	if err != nil || !ok || !rec.At.After(r.failed) || !rec.At.Before(r.first) {
		return r.first
	}
	return rec.At
}

// oncePerPoll returns the checks to evaluate once each per poll, and how
// many polls in a row must pass: the most any check asks for.
func oncePerPoll(checks []lab.Check) ([]lab.Check, int) {
	out := make([]lab.Check, len(checks))
	need := 1
	for i, c := range checks {
		need = max(need, c.Passes)
		c.Passes = 1
		out[i] = c
	}
	return out, need
}

// record sets (or, with a zero held, clears) the watched T1 of session
// id's attempt that started at started, unless the session is busy or
// moved on; a busy session is tried again at the next poll.
func (w *Watcher) record(ctx context.Context, id string, started, held time.Time) {
	unlock, ok := w.m.tryLock(id)
	if !ok {
		return
	}
	defer unlock()
	s, err := w.m.load(ctx, id)
	if err != nil || s.state() != InExercise || s.work.Attempt == nil || !s.work.Attempt.Started.Equal(started) || s.work.Pending != nil {
		return
	}
	msg := "goals no longer all hold"
	s.work.Attempt.T1, s.work.T1Source = time.Time{}, ""
	if !held.IsZero() {
		s.work.Attempt.T1, s.work.T1Source = held, T1Watched
		msg = "goals all hold since " + held.Local().Format("15:04:05.000") + " (watched)"
	}
	ev := newEvent(KindWatch, s.exerciseID(), msg, WatchData{Held: held})
	if err := w.m.save(ctx, s, nil, ev); err != nil {
		w.m.log.Warn("watch: record T1", "session", id, "err", err)
	}
}
