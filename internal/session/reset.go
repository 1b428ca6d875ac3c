package session

import (
	"context"
	"errors"
)

// Reset returns the current exercise's cluster state to where the attempt
// began, without rebuilding the cluster: the chaos is undone and the
// steady state reached again. The session goes back to ready, so the
// exercise can be started afresh; its hints start over. The reset is
// recorded before it acts, so one that is killed half-way is finished by
// the next command.
func (m *Manager) Reset(ctx context.Context, id string, progress Progress) (*Status, error) {
	s, unlock, err := m.open(ctx, id, progress)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ex := s.exercise()
	a := s.work.Attempt
	if err := s.refuse(ActReset); err != nil {
		return nil, err
	}
	e, err := m.engine(&s.rec)
	if err != nil {
		return nil, err
	}
	if err := m.intend(ctx, s, OpReset, ""); err != nil {
		return nil, err
	}
	rep := m.stepReporter(ctx, s.rec.ID, ex.ID, progress)
	if err := e.Reset(ctx, s.lab, a, engineProgress(rep)); err != nil {
		// Reported, not interrupted: the learner decides what next.
		return nil, errors.Join(err, m.unintend(ctx, s))
	}
	ev := newEvent(KindReset, ex.ID, "exercise "+ex.ID+" reset", AttemptData{Attempt: a})
	s.work = work{}
	if err := m.move(ctx, s, Ready, "exercise "+ex.ID+" reset", progress, ev); err != nil {
		return nil, err
	}
	return m.status(ctx, s)
}
