package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/store"
)

// A session nobody looks at sleeps: no page of it is open and no command
// of its learner came for a while. Its cluster is first frozen (its
// processes keep their memory and use no CPU; it wakes at once), and,
// later, stopped (its memory given back, its state kept on disk; it wakes
// in seconds, from its directory). The next request of its learner wakes
// it before it is answered, with a step the page shows.
//
// Asleep, a session's cluster stands still, and so does its learner's
// clock: the time asleep while a fault is live is left out of the time to
// recovery and of the exercise's time limit (engine.Attempt.Away). The
// session's own limit and its idle expiry still run: a class's time is
// the wall clock's.

// Defaults of oplab serve: frozen after ten minutes nobody looked, stopped
// after half an hour.
const (
	DefaultSleepAfter     = 10 * time.Minute
	DefaultSleepStopAfter = 30 * time.Minute
)

// SleepOptions say when a session nobody looks at sleeps.
type SleepOptions struct {
	// Freeze: nobody looked at the session for this long, its cluster is
	// frozen; zero never freezes one.
	Freeze time.Duration
	// Stop: nobody looked at it for this long, its cluster is stopped and
	// its memory given back; zero never stops one. Warm sessions, whose
	// point is to be ready at once, are frozen at the most.
	Stop time.Duration
	// Watched reports whether a page follows session id now (one of its
	// live streams has a viewer): it is being looked at. Nil: none is.
	Watched func(id string) bool
}

// Asleep says how a session sleeps.
type Asleep struct {
	// Since is when it fell asleep.
	Since time.Time `json:"since"`
	// Stopped: its cluster's processes are stopped and their memory given
	// back; else they are frozen.
	Stopped bool `json:"stopped,omitempty"`
}

// SleepData is the detail of a sleep or wake event.
type SleepData struct {
	// Stopped: the cluster was stopped (a sleep event), or woke from
	// being stopped (a wake event); else frozen.
	Stopped bool `json:"stopped,omitempty"`
	// Since is when the session fell asleep (a wake event).
	Since time.Time `json:"since,omitzero"`
	// Took is how long the cluster took to wake (a wake event), in ms.
	Took int64 `json:"tookMs,omitempty"`
}

// seenEvery is how often at most a session's being looked at is written
// to the store: a page reads its status every few seconds.
const seenEvery = 15 * time.Second

// seenMarks are, per session, when this process last wrote that it was
// looked at, and when it was last looked at, written or not.
type seenMarks struct {
	mu     sync.Mutex
	last   map[string]time.Time
	looked map[string]time.Time
}

// with returns rec with the latest look this process knows of, which
// the store may not hold yet: a sleep shorter than seenEvery must not
// freeze a session someone looks at.
func (s *seenMarks) with(rec store.Session) store.Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if at := s.looked[rec.ID]; at.After(rec.Seen) {
		rec.Seen = at
	}
	return rec
}

// seen records that someone looks at session id now: its sleep is put
// off. Writes are spaced by seenEvery.
func (m *Manager) seen(ctx context.Context, id string) {
	now := time.Now()
	m.marks.mu.Lock()
	if m.marks.last == nil {
		m.marks.last = map[string]time.Time{}
		m.marks.looked = map[string]time.Time{}
	}
	m.marks.looked[id] = now
	if now.Sub(m.marks.last[id]) < seenEvery {
		m.marks.mu.Unlock()
		return
	}
	m.marks.last[id] = now
	m.marks.mu.Unlock()
	if err := m.o.Store.MarkSeen(context.WithoutCancel(ctx), id, now); err != nil {
		m.log.Warn("mark a session seen", "session", id, "err", err)
	}
}

// lastSeen is when someone last looked at rec's session: a mark, its
// learner's claim of it (a warm session), or its start.
func lastSeen(rec store.Session, wk work) time.Time {
	t := rec.Created
	for _, at := range []time.Time{rec.Seen, wk.Claimed} {
		if at.After(t) {
			t = at
		}
	}
	return t
}

// Sleep puts to sleep the live sessions nobody has looked at for long
// enough (see SleepOptions), deepening a frozen one's sleep into a stop
// when its time comes, and returns the ids of those it put to sleep. A
// session being worked on right now, or whose provider cannot sleep, is
// left awake.
func (m *Manager) Sleep(ctx context.Context, o SleepOptions) ([]string, error) {
	if o.Freeze <= 0 && o.Stop <= 0 {
		return nil, nil
	}
	list, err := m.unwatched(ctx, o.Watched)
	if err != nil {
		return nil, err
	}
	var (
		slept []string
		errs  []error
	)
	for _, q := range list {
		rec := q.rec
		stop, ok := o.due(rec, q.work, time.Now())
		if !ok {
			continue
		}
		unlock, locked := m.tryLock(rec.ID)
		if !locked {
			continue
		}
		due := func(rec store.Session, wk work) bool {
			st, ok := o.due(rec, wk, time.Now())
			return ok && st == stop
		}
		msg := "asleep: nobody looked at it for a while; its cluster is frozen"
		if stop {
			msg = "asleep: nobody looked at it for a while; its cluster is stopped and its memory given back"
		}
		did, err := m.sleepLocked(ctx, rec.ID, stop, due, msg)
		unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", rec.ID, err))
		}
		if did {
			slept = append(slept, rec.ID)
		}
	}
	return slept, errors.Join(errs...)
}

// RoomOptions say which session may be put to sleep to make room on the
// machine for another learner's start or wake (MakeRoom).
type RoomOptions struct {
	// After: only a session nobody has looked at for this long may be
	// stopped for another's room; zero stops none.
	After time.Duration
	// Watched reports whether a page follows session id now: it is being
	// looked at, and stays awake. Nil: none is.
	Watched func(id string) bool
}

// MakeRoom stops the cluster of the session nobody has looked at for
// longest, if nobody has for o.After, so that a start or a wake that
// waits for room on the machine gets the room it held: the session
// sleeps, stopped, as one nobody looked at for Stop does, and wakes at
// its learner's next request. A warm session is not stopped (its point
// is to be ready at once), nor one being worked on now. It returns the
// session put to sleep, "" when none could be.
func (m *Manager) MakeRoom(ctx context.Context, o RoomOptions) (string, error) {
	if o.After <= 0 {
		return "", nil
	}
	list, err := m.unwatched(ctx, o.Watched)
	if err != nil {
		return "", err
	}
	type candidate struct {
		id   string
		seen time.Time
	}
	now := time.Now()
	var cands []candidate
	for _, q := range list {
		if IsPool(q.rec.Learner) || q.work.Asleep != nil && q.work.Asleep.Stopped {
			continue
		}
		if seen := lastSeen(q.rec, q.work); now.Sub(seen) >= o.After {
			cands = append(cands, candidate{q.rec.ID, seen})
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int { return a.seen.Compare(b.seen) })
	due := func(rec store.Session, wk work) bool {
		return time.Since(lastSeen(rec, wk)) >= o.After && (wk.Asleep == nil || !wk.Asleep.Stopped)
	}
	var errs []error
	for _, c := range cands {
		unlock, locked := m.tryLock(c.id)
		if !locked {
			continue
		}
		msg := fmt.Sprintf("asleep: nobody looked at it for %s and another learner needed the room; its cluster is stopped and its memory given back", now.Sub(c.seen).Round(time.Second))
		did, err := m.sleepLocked(ctx, c.id, true, due, msg)
		unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", c.id, err))
			continue
		}
		if did {
			return c.id, errors.Join(errs...)
		}
	}
	return "", errors.Join(errs...)
}

// quiet is a live session nobody looks at: its record, with the latest
// look this process knows of, and its work.
type quiet struct {
	rec  store.Session
	work work
}

// unwatched returns the live sessions with a cluster, and no work under
// way, that no page follows (watched, nil for none): those that may
// sleep. The ones a page follows are marked seen.
func (m *Manager) unwatched(ctx context.Context, watched func(id string) bool) ([]quiet, error) {
	list, err := m.o.Store.Sessions(ctx, store.Filter{States: []string{string(Ready), string(InExercise), string(Completed)}})
	if err != nil {
		return nil, err
	}
	var out []quiet
	for _, rec := range list {
		if rec.Cluster == "" || pendingOf(rec.Data) != nil {
			continue
		}
		if watched != nil && watched(rec.ID) {
			m.seen(ctx, rec.ID)
			continue
		}
		var wk work
		if err := decodeWork(rec.Data, &wk); err != nil {
			continue
		}
		out = append(out, quiet{m.marks.with(rec), wk})
	}
	return out, nil
}

// due says whether rec's session should sleep deeper than it does at now,
// and whether that sleep is a stop.
func (o SleepOptions) due(rec store.Session, wk work, now time.Time) (stop, ok bool) {
	idle := now.Sub(lastSeen(rec, wk))
	if o.Stop > 0 && idle >= o.Stop && !IsPool(rec.Learner) && (wk.Asleep == nil || !wk.Asleep.Stopped) {
		return true, true
	}
	if o.Freeze > 0 && idle >= o.Freeze && wk.Asleep == nil {
		return false, true
	}
	return false, false
}

// sleepLocked puts session id, which the caller holds locked, to sleep,
// stopped or frozen, if, read again, it is still due; msg is its event's.
func (m *Manager) sleepLocked(ctx context.Context, id string, stop bool, due func(store.Session, work) bool, msg string) (bool, error) {
	s, err := m.load(ctx, id)
	if err != nil {
		return false, err
	}
	if !s.state().Active() && s.state() != Completed || s.state() == Provisioning || s.work.Pending != nil || !m.hasCluster(s) {
		return false, nil
	}
	if !due(m.marks.with(s.rec), s.work) {
		return false, nil
	}
	p, err := m.providerOf(s.rec.Provider)
	if err != nil {
		return false, err
	}
	if !p.Info().Capabilities.Sleeps {
		return false, nil
	}
	since := time.Now().UTC()
	if a := s.work.Asleep; a != nil {
		since = a.Since // frozen, and now stopped: one sleep
	}
	if stop {
		err = p.Stop(ctx, s.rec.Cluster)
	} else {
		err = p.Freeze(ctx, s.rec.Cluster)
	}
	if err != nil {
		if errors.Is(err, cluster.ErrUnsupported) {
			return false, nil // a cluster made without a group
		}
		return false, err
	}
	s.work.Asleep = &Asleep{Since: since, Stopped: stop}
	ev := newEvent(KindSleep, s.exerciseID(), msg, SleepData{Stopped: stop})
	if err := m.save(ctx, s, nil, ev); err != nil {
		return false, err
	}
	m.log.Info("session asleep", "session", id, "stopped", stop)
	return true, nil
}

// Wake wakes session id if it sleeps and says that someone looks at it,
// then returns its view: what a page of the session or a command of its
// learner does before anything else. Progress hears the waking as a step.
func (m *Manager) Wake(ctx context.Context, id string, progress Progress) (*Status, error) {
	if err := m.wake(ctx, id, progress); err != nil {
		return nil, err
	}
	return m.Status(ctx, id)
}

// wake says that someone looks at session id and wakes it if it sleeps;
// the caller does not hold its lock.
func (m *Manager) wake(ctx context.Context, id string, progress Progress) error {
	rec, err := m.record(ctx, id)
	if err != nil {
		return err
	}
	m.seen(ctx, id)
	if asleepOf(rec.Data) == nil {
		return nil
	}
	unlock, err := m.lock(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	s, err := m.load(ctx, id)
	if err != nil {
		return err
	}
	return m.wakeLocked(ctx, s, progress)
}

// wakeLocked wakes s, which the caller holds locked, if it sleeps: its
// cluster thawed or started again, and the time asleep left out of the
// live fault's clock. A cluster started again from disk is a start like
// any other, and waits its turn for room on the machine
// (Options.WakeAdmit) while ctx lasts; a thaw does not wait, as a frozen
// cluster's room is still its own.
func (m *Manager) wakeLocked(ctx context.Context, s *live, progress Progress) (err error) {
	a := s.work.Asleep
	if a == nil {
		return nil
	}
	wait := ctx
	ctx = context.WithoutCancel(ctx) // half a wake helps nobody
	p, err := m.providerOf(s.rec.Provider)
	if err != nil {
		return err
	}
	rep := m.stepReporter(ctx, s.rec.ID, s.exerciseID(), progress)
	const thawing, starting = "Waking your cluster", "Starting your cluster again from where you left it"
	step := StepData{Phase: "wake", Message: thawing}
	if a.Stopped {
		step.Message = starting
	}
	rep(step)
	began := time.Now()
	// start starts the stopped cluster again once admitted. Its admission
	// ends when the session is saved awake (counted live from then on), or
	// when the wake failed.
	done := func(bool) {}
	defer func() { done(err == nil) }()
	start := func() error {
		if m.o.WakeAdmit != nil {
			d, err := m.o.WakeAdmit(wait, progress)
			if err != nil {
				return err
			}
			done = d
		}
		return p.Start(ctx, s.rec.Cluster)
	}
	if a.Stopped {
		err = start()
	} else if err = p.Thaw(ctx, s.rec.Cluster); err != nil {
		// The machine restarted while the session slept frozen, and took
		// the frozen processes and their group with it: its directory is
		// all there is, and it starts again from it.
		if cs, serr := p.Status(ctx, s.rec.Cluster); serr == nil && cs.State == cluster.StateStopped {
			step.Message = starting
			rep(step)
			err = start()
			a.Stopped = true
		}
	}
	step.Done, step.Elapsed = true, time.Since(began)
	if err != nil {
		step.Error = err.Error()
		rep(step)
		return fmt.Errorf("wake session %s: %w", s.rec.ID, err)
	}
	rep(step)
	now := time.Now().UTC()
	// The learner was away and the cluster stood still: a fault's clock
	// does not run while it sleeps.
	if at := s.work.Attempt; at != nil && at.T1.IsZero() {
		at.Away = append(at.Away, engine.Span{From: a.Since, To: now})
	}
	s.work.Asleep = nil
	// The engine's clients of the sleeping cluster may hold connections
	// to processes that are gone.
	if a.Stopped {
		m.forget(s.rec.ID)
	}
	msg := fmt.Sprintf("awake after %s asleep (woke in %s)", now.Sub(a.Since).Round(time.Second), step.Elapsed.Round(time.Millisecond))
	ev := newEvent(KindWake, s.exerciseID(), msg, SleepData{Stopped: a.Stopped, Since: a.Since, Took: step.Elapsed.Milliseconds()})
	m.log.Info("session woke", "session", s.rec.ID, "stopped", a.Stopped, "took", step.Elapsed)
	return m.save(ctx, s, progress, ev)
}

// Stopped counts the live sessions asleep with their clusters stopped:
// they hold no memory, and admission does not count them.
func (m *Manager) Stopped(ctx context.Context) (int, error) {
	list, err := m.o.Store.Sessions(ctx, store.Filter{States: []string{string(Ready), string(InExercise)}})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, rec := range list {
		if a := asleepOf(rec.Data); a != nil && a.Stopped {
			n++
		}
	}
	return n, nil
}

// asleepOf reads how a stored session sleeps, nil when it is awake.
func asleepOf(data []byte) *Asleep {
	var w struct {
		Asleep *Asleep `json:"asleep"`
	}
	if decodeWork(data, &w) != nil {
		return nil
	}
	return w.Asleep
}
