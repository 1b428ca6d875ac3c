package session

import (
	"context"
	"encoding/json"
	"fmt"

	"oplab.dev/oplab/internal/store"
)

// Stop ends a session and deletes its cluster. A live session becomes
// expired (it ended before it was completed) with reason; one that already
// ended keeps its state. Stopping twice is harmless. The stop is recorded
// before the cluster is deleted, so a stop that is killed half-way is
// finished by the next command.
func (m *Manager) Stop(ctx context.Context, id, reason string, progress Progress) (*Status, error) {
	unlock, err := m.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := m.record(ctx, id)
	if err != nil {
		return nil, err
	}
	s := &live{rec: rec}
	if s.lab, err = m.Lab(rec.Lab); err != nil {
		return nil, err
	}
	// A working state that cannot be read does not keep a session from
	// being stopped.
	_ = json.Unmarshal(rec.Data, &s.work)
	// Its cluster is deleted where it lives, or the stop says why not:
	// never "deleted" for a cluster another provider keeps running.
	if _, err := m.providerOf(rec.Provider); err != nil {
		return nil, fmt.Errorf("stop session %s: %w", id, err)
	}
	if reason == "" {
		reason = "stopped"
	}
	return m.stop(ctx, s, reason, progress)
}

// stop ends s, which the caller holds locked: it records the intent,
// deletes the cluster, and records the outcome.
func (m *Manager) stop(ctx context.Context, s *live, reason string, progress Progress) (*Status, error) {
	ctx = context.WithoutCancel(ctx) // half a stop helps nobody
	if s.work.Pending == nil || s.work.Pending.Op != OpStop {
		if err := m.intend(ctx, s, OpStop, reason); err != nil {
			return nil, err
		}
	}
	deleted, err := m.deleteCluster(ctx, s)
	if err != nil {
		return nil, err
	}
	var evs []*store.Event
	if deleted {
		evs = append(evs, newEvent(KindCluster, "", "cluster "+s.rec.Cluster+" deleted", ClusterData{Name: s.rec.Cluster, Deleted: true}))
	}
	s.work.Pending = nil
	if !s.state().Terminal() {
		s.work.Ended = reason
		err = m.move(ctx, s, Expired, reason, progress, evs...)
	} else {
		err = m.save(ctx, s, progress, evs...)
	}
	if err != nil {
		return nil, err
	}
	return m.status(ctx, s)
}

// ReleaseEnded deletes the clusters that a learner's ended sessions still
// have (a completed lab keeps its cluster for the quiz until the learner
// starts the next one); their results stay. Start calls it, so a learner
// never holds more than one cluster.
func (m *Manager) ReleaseEnded(ctx context.Context, learner string, progress Progress) error {
	list, err := m.o.Store.Sessions(ctx, store.Filter{Learner: learner, States: []string{string(Completed), string(Failed), string(Expired)}})
	if err != nil {
		return err
	}
	for _, rec := range list {
		s := &live{rec: rec}
		if s.lab, err = m.Lab(rec.Lab); err != nil || !m.hasCluster(s) {
			continue
		}
		if _, err := m.Stop(ctx, rec.ID, "", progress); err != nil {
			return fmt.Errorf("delete the cluster of ended session %s: %w", rec.ID, err)
		}
	}
	return nil
}
