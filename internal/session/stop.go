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
	rec, err := m.o.Store.Session(ctx, id)
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
	if m.o.Provider == nil {
		return nil, fmt.Errorf("stop session %s: no cluster provider configured", id)
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
		err = m.move(ctx, s, Expired, reason, progress, evs...)
	} else {
		err = m.save(ctx, s, progress, evs...)
	}
	if err != nil {
		return nil, err
	}
	return m.status(ctx, s)
}
