package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"oplab.dev/oplab/internal/store"
)

// RecoverReport says what Recover did.
type RecoverReport struct {
	// Failed are sessions left provisioning by an oplab that stopped.
	Failed []string `json:"failed"`
	// Deleted are sessions whose leftover clusters were deleted.
	Deleted []string `json:"deleted"`
	// Settled are sessions whose interrupted chaos, reset or stop was
	// rolled back or finished.
	Settled []string `json:"settled,omitempty"`
}

// Recover tidies up after an oplab that stopped uncleanly (a restarted
// server calls it on start-up, and now and then): a session left
// provisioning by a process that is gone is recorded as failed and its
// cluster deleted; an interrupted chaos is rolled back and an interrupted
// reset or stop finished; and the clusters that failed and expired
// sessions still have are deleted. Sessions being worked on are left
// alone. With Options.LockDir a session's owner is known to be gone when
// its lock is free; without it, only when the session has shown no
// progress for longer than stale.
func (m *Manager) Recover(ctx context.Context, stale time.Duration) (RecoverReport, error) {
	var rep RecoverReport
	list, err := m.o.Store.Sessions(ctx, store.Filter{States: []string{string(Provisioning), string(Ready), string(InExercise), string(Failed), string(Expired)}})
	if err != nil {
		return rep, err
	}
	var errs []error
	for _, rec := range list {
		st := State(rec.State)
		if (st == Ready || st == InExercise) && pendingOf(rec.Data) == nil {
			continue
		}
		unlock, ok := m.tryLock(rec.ID)
		if !ok {
			continue
		}
		what, err := m.recoverOne(ctx, rec, stale)
		unlock()
		switch what {
		case "failed":
			rep.Failed = append(rep.Failed, rec.ID)
		case "deleted":
			rep.Deleted = append(rep.Deleted, rec.ID)
		case "settled":
			rep.Settled = append(rep.Settled, rec.ID)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", rec.ID, err))
		}
	}
	return rep, errors.Join(errs...)
}

// recoverOne recovers a session the caller holds locked and says what it
// did: "failed", "deleted", "settled" or "".
func (m *Manager) recoverOne(ctx context.Context, rec store.Session, stale time.Duration) (string, error) {
	s, err := m.load(ctx, rec.ID)
	if err != nil {
		return "", err
	}
	if !m.ownerKnown() {
		last, err := m.lastActivity(ctx, s)
		if err != nil || time.Since(last) < stale {
			return "", err
		}
	}
	switch st := s.state(); {
	case st == Provisioning:
		return "failed", m.settleGone(ctx, s, nil, false)
	case st.Active():
		return "settled", m.settleGone(ctx, s, nil, false)
	}
	if !m.hasCluster(s) {
		return "", nil
	}
	if _, err := m.deleteCluster(ctx, s); err != nil {
		return "", err
	}
	ev := newEvent(KindCluster, "", "cluster "+rec.Cluster+" deleted (left over)", ClusterData{Name: rec.Cluster, Deleted: true})
	return "deleted", m.save(ctx, s, nil, ev)
}

// Heal settles what oplab processes that are gone left half-done on the
// learner's live sessions (every learner's when learner is empty), as far
// as that is quick: a session left provisioning fails and its cluster is
// deleted, an interrupted stop is finished. It needs Options.LockDir to
// know that a process is gone, and does nothing without it. Sessions
// being worked on are left alone.
func (m *Manager) Heal(ctx context.Context, learner string) error {
	if !m.ownerKnown() {
		return nil
	}
	list, err := m.o.Store.Sessions(ctx, store.Filter{Learner: learner, States: activeStates()})
	if err != nil {
		return err
	}
	var errs []error
	for _, rec := range list {
		if err := m.healOne(ctx, rec); err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", rec.ID, err))
		}
	}
	return errors.Join(errs...)
}

// healOne settles one session quickly if it needs it and nobody works on
// it.
func (m *Manager) healOne(ctx context.Context, rec store.Session) error {
	if !m.ownerKnown() || State(rec.State) != Provisioning && pendingOf(rec.Data) == nil {
		return nil
	}
	unlock, ok := m.tryLock(rec.ID)
	if !ok {
		return nil // its owner is alive and at work
	}
	defer unlock()
	s, err := m.load(ctx, rec.ID)
	if err != nil {
		return err
	}
	return m.settleGone(ctx, s, nil, true)
}

// settle deals with what a process that is gone left half-done on s,
// which the caller holds locked, when holding the lock proves that nobody
// else works on it (Options.LockDir).
func (m *Manager) settle(ctx context.Context, s *live, progress Progress, quick bool) error {
	if !m.ownerKnown() {
		return nil
	}
	return m.settleGone(ctx, s, progress, quick)
}

// settleGone deals with what a process that is gone left half-done on s:
//
//   - provisioning: the session fails, saying which process stopped after
//     which step, and its cluster (processes and directory) is deleted; a
//     new start takes seconds, and a half-made cluster is not worth
//     trusting;
//   - an interrupted stop is finished;
//   - an interrupted chaos is rolled back (the exercise's reset) and the
//     session is ready for the exercise again; an interrupted reset is
//     finished. Both need the cluster and take a while, so quick leaves
//     them to the next command that acts on the exercise.
//
// The session's notice says what was done.
func (m *Manager) settleGone(ctx context.Context, s *live, progress Progress, quick bool) error {
	ctx = context.WithoutCancel(ctx)
	if s.state() == Provisioning {
		cause := fmt.Errorf("%s stopped while starting the session%s", m.who(s.rec.ID, nil), m.lastStep(ctx, s))
		if _, err := m.fail(ctx, s, cause, progress); s.state() != Failed {
			return err
		}
		return nil
	}
	p := s.work.Pending
	if p == nil || !s.state().Active() && p.Op != OpStop {
		return nil
	}
	when := p.Since.Local().Format(time.TimeOnly)
	switch p.Op {
	case OpStop:
		s.work.Notice = fmt.Sprintf("%s stopped while ending the session (at %s); the stop was finished", m.who(s.rec.ID, p), when)
		_, err := m.stop(ctx, s, p.Reason, progress)
		return err
	case OpChaos, OpReset:
		if quick {
			return nil
		}
		return m.settleExercise(ctx, s, p, progress)
	case OpRebuild:
		if quick {
			return nil
		}
		return m.rebuild(ctx, s, fmt.Sprintf("%s stopped while making it anew at %s", m.who(s.rec.ID, p), when), progress)
	}
	s.work.Pending = nil // an operation this oplab does not know
	return m.save(ctx, s, progress)
}

// settleExercise rolls back an interrupted chaos, or finishes an
// interrupted reset: both are the exercise's reset, which is idempotent.
func (m *Manager) settleExercise(ctx context.Context, s *live, p *Pending, progress Progress) error {
	ex := s.exercise()
	a := s.work.Attempt
	who, when := m.who(s.rec.ID, p), p.Since.Local().Format(time.TimeOnly)
	if ex == nil || a == nil {
		// Stopped before the attempt was recorded: nothing was done to
		// the cluster.
		s.work.Pending = nil
		s.work.Notice = fmt.Sprintf("%s stopped during %s (at %s) before it changed the cluster", who, p.Op, when)
		return m.save(ctx, s, progress)
	}
	e, err := m.engine(&s.rec)
	if err != nil {
		return err
	}
	rep := m.stepReporter(ctx, s.rec.ID, ex.ID, progress)
	if err := e.Reset(ctx, s.lab, a, engineProgress(rep)); err != nil {
		return fmt.Errorf("%s stopped during %s of exercise %s (at %s), and resetting the exercise failed: %w (run `oplab lab reset` again, or stop the session)", who, p.Op, ex.ID, when, err)
	}
	msg := fmt.Sprintf("%s stopped during %s of exercise %s (at %s); the chaos was rolled back", who, p.Op, ex.ID, when)
	if p.Op == OpReset {
		msg = fmt.Sprintf("%s stopped during the reset of exercise %s (at %s); the reset was finished", who, ex.ID, when)
	}
	ev := newEvent(KindReset, ex.ID, msg, AttemptData{Attempt: a})
	s.work = s.work.reset(msg)
	return m.move(ctx, s, Ready, msg, progress, ev)
}

// who names the process that left session id's work half-done.
func (m *Manager) who(id string, p *Pending) string {
	pid := m.lastHolder(id)
	if p != nil && p.PID != 0 {
		pid = p.PID
	}
	if pid == 0 {
		return "the oplab process working on it"
	}
	return fmt.Sprintf("the oplab process working on it (pid %d)", pid)
}

// lastStep names the last step the session recorded, for the reason of a
// failed start.
func (m *Manager) lastStep(ctx context.Context, s *live) string {
	ev, ok, err := m.o.Store.LastEvent(ctx, s.rec.ID, store.EventFilter{Kinds: []string{KindStep}})
	if err != nil {
		return ""
	}
	if st := eventView(ev).Step; ok && st != nil && st.Message != "" {
		return fmt.Sprintf(", after %q", st.Message)
	}
	return ", before its first step ended"
}

// lastActivity is the time of the session's newest timeline event.
func (m *Manager) lastActivity(ctx context.Context, s *live) (time.Time, error) {
	ev, ok, err := m.o.Store.LastEvent(ctx, s.rec.ID, store.EventFilter{})
	if err != nil {
		return time.Time{}, err
	}
	// Every change of the record comes with an event.
	if ok {
		return ev.At, nil
	}
	return s.rec.Updated, nil
}
