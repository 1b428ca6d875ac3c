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
}

// Recover tidies up after an oplab that stopped uncleanly (a restarted
// server calls it on start-up, and now and then): a session whose
// provisioning has shown no progress for longer than stale is recorded as
// failed, and the clusters that failed and expired sessions still have are
// deleted. Sessions this Manager is working on are left alone.
func (m *Manager) Recover(ctx context.Context, stale time.Duration) (RecoverReport, error) {
	var rep RecoverReport
	list, err := m.o.Store.Sessions(ctx, store.Filter{States: []string{string(Provisioning), string(Failed), string(Expired)}})
	if err != nil {
		return rep, err
	}
	var errs []error
	for _, rec := range list {
		unlock, ok := m.tryLock(rec.ID)
		if !ok {
			continue
		}
		failed, deleted, err := m.recoverOne(ctx, rec, stale)
		unlock()
		if failed {
			rep.Failed = append(rep.Failed, rec.ID)
		}
		if deleted {
			rep.Deleted = append(rep.Deleted, rec.ID)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", rec.ID, err))
		}
	}
	return rep, errors.Join(errs...)
}

func (m *Manager) recoverOne(ctx context.Context, rec store.Session, stale time.Duration) (failed, deleted bool, err error) {
	s, err := m.load(ctx, rec.ID)
	if err != nil {
		return false, false, err
	}
	if s.state() == Provisioning {
		last, err := m.lastActivity(ctx, s)
		if err != nil || time.Since(last) < stale {
			return false, false, err
		}
		if _, err := m.fail(ctx, s, fmt.Errorf("oplab stopped while provisioning (no progress since %s)", last.Format(time.RFC3339)), nil); err != nil && s.state() != Failed {
			return false, false, err
		}
		return true, false, nil
	}
	if m.o.Provider == nil || !m.hasCluster(s) {
		return false, false, nil
	}
	if _, err := m.deleteCluster(ctx, s); err != nil {
		return false, false, err
	}
	ev := newEvent(KindCluster, "", "cluster "+rec.Cluster+" deleted (left over)", ClusterData{Name: rec.Cluster, Deleted: true})
	return false, true, m.save(ctx, s, nil, ev)
}

// lastActivity is the time of the session's newest timeline event.
func (m *Manager) lastActivity(ctx context.Context, s *live) (time.Time, error) {
	evs, err := m.o.Store.Events(ctx, s.rec.ID, 0)
	if err != nil {
		return time.Time{}, err
	}
	// Every change of the record comes with an event.
	if n := len(evs); n > 0 {
		return evs[n-1].At, nil
	}
	return s.rec.Updated, nil
}
