package session

import (
	"context"
	"errors"
	"fmt"
)

// Reset returns the current exercise's cluster state to where the attempt
// began, without rebuilding the cluster: the chaos is undone and the
// steady state reached again. The session goes back to ready, so the
// exercise can be started afresh; its hints start over. The reset is
// recorded before it acts, so one that is killed half-way is finished by
// the next command.
//
// A cluster that ran into a bound of its budget (Status.Budget.Trouble:
// out of memory, etcd full, a process gone) cannot be trusted to undo
// anything: Reset then makes it anew, as Start made it, whatever step
// the exercise is at.
func (m *Manager) Reset(ctx context.Context, id string, progress Progress) (*Status, error) {
	s, unlock, err := m.open(ctx, id, progress)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ex := s.exercise()
	a := s.work.Attempt
	b := m.budgetOf(ctx, s)
	s.troubled = b != nil && b.Trouble != nil
	if err := s.refuse(ActReset); err != nil {
		return nil, err
	}
	if s.troubled {
		if err := m.intend(ctx, s, OpRebuild, b.Trouble.Kind); err != nil {
			return nil, err
		}
		if err := m.rebuild(ctx, s, "it had run into its budget: "+b.Trouble.Kind, progress); err != nil {
			return nil, err
		}
		return m.status(ctx, s)
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
	s.work = s.work.reset("")
	if err := m.move(ctx, s, Ready, "exercise "+ex.ID+" reset", progress, ev); err != nil {
		return nil, err
	}
	return m.status(ctx, s)
}

// rebuild deletes s's cluster and makes it again with the lab's setup,
// under an OpRebuild intent the caller recorded; the session is then
// ready for its current exercise. why says what made it needed. A
// rebuild that fails leaves the intent, so the next command tries again.
func (m *Manager) rebuild(ctx context.Context, s *live, why string, progress Progress) error {
	ex, a := s.exercise(), s.work.Attempt
	if _, err := m.deleteCluster(ctx, s); err != nil {
		return err
	}
	gone := newEvent(KindCluster, "", "cluster "+s.rec.Cluster+" deleted", ClusterData{Name: s.rec.Cluster, Deleted: true})
	if err := m.o.Store.AppendEvents(context.WithoutCancel(ctx), s.rec.ID, gone); err != nil {
		return err
	}
	progress.report(gone, nil)
	if err := m.provision(ctx, s, progress); err != nil {
		return fmt.Errorf("make the cluster anew (%s): %w; reset again to retry", why, err)
	}
	msg := fmt.Sprintf("exercise %s reset on a new cluster (%s)", ex.ID, why)
	ev := newEvent(KindReset, ex.ID, msg, AttemptData{Attempt: a})
	s.work = s.work.reset(msg)
	s.troubled = false
	m.forgetFull(s.rec.ID)
	return m.move(ctx, s, Ready, msg, progress, ev)
}
