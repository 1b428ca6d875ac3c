package session

import (
	"context"
	"fmt"

	"oplab.dev/oplab/internal/store"
)

// Stop ends a session and deletes its cluster. A live session becomes
// expired (it ended before it was completed) with reason; one that already
// ended keeps its state. Stopping twice is harmless.
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
	if m.o.Provider == nil {
		return nil, fmt.Errorf("stop session %s: no cluster provider configured", id)
	}
	deleted, err := m.deleteCluster(ctx, s)
	if err != nil {
		return nil, err
	}
	var evs []*store.Event
	if deleted {
		evs = append(evs, newEvent(KindCluster, "", "cluster "+rec.Cluster+" deleted", ClusterData{Name: rec.Cluster, Deleted: true}))
	}
	if reason == "" {
		reason = "stopped"
	}
	switch {
	case !s.state().Terminal():
		err = m.move(ctx, s, Expired, reason, progress, evs...)
	case len(evs) > 0:
		err = m.save(ctx, s, progress, evs...)
	}
	if err != nil {
		return nil, err
	}
	return m.status(ctx, s)
}
