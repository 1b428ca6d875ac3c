package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"oplab.dev/oplab/internal/store"
)

// ExpireOptions say when a live session has lasted long enough; a
// session's own limit (StartOptions.TimeLimit) applies too.
type ExpireOptions struct {
	// Idle: no activity (a step, a check, a hint, a console command, ...)
	// for longer than this ends the session; zero never does.
	Idle time.Duration
	// Max: a session older than this ends, however busy; zero never does.
	Max time.Duration
}

// Expire stops the live sessions that o says have lasted long enough,
// which deletes their clusters and keeps their results, and returns their
// ids. A session being worked on right now is left for the next call.
func (m *Manager) Expire(ctx context.Context, o ExpireOptions) ([]string, error) {
	list, err := m.o.Store.Sessions(ctx, store.Filter{States: []string{string(Ready), string(InExercise)}})
	if err != nil {
		return nil, err
	}
	var (
		ended []string
		errs  []error
	)
	for _, rec := range list {
		reason, err := m.expiry(ctx, rec, o)
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", rec.ID, err))
		}
		if reason == "" {
			continue
		}
		unlock, ok := m.tryLock(rec.ID)
		if !ok {
			continue
		}
		expired, err := m.expireLocked(ctx, rec.ID, o)
		unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", rec.ID, err))
		}
		if expired {
			ended = append(ended, rec.ID)
		}
	}
	return ended, errors.Join(errs...)
}

// expiry says why rec has lasted long enough, "" when it has not.
func (m *Manager) expiry(ctx context.Context, rec store.Session, o ExpireOptions) (string, error) {
	if IsPool(rec.Learner) {
		return "", nil // waiting for its learner is what a warm session is for
	}
	// A warm session's time counts from when its learner got it.
	began := rec.Created
	var wk work
	if json.Unmarshal(rec.Data, &wk) == nil && wk.Claimed.After(began) {
		began = wk.Claimed
	}
	limit := o.Max
	if wk.TimeLimit > 0 && (limit <= 0 || wk.TimeLimit < limit) {
		limit = wk.TimeLimit // its class's, when shorter
	}
	if limit > 0 {
		limit += wk.Extended // an instructor gave it more time
	}
	if limit > 0 && time.Since(began) > limit {
		return fmt.Sprintf("the session reached its limit of %s", limit), nil
	}
	if o.Idle <= 0 {
		return "", nil
	}
	last, err := m.lastActivity(ctx, &live{rec: rec})
	if err != nil {
		return "", err
	}
	if time.Since(last) > o.Idle {
		return fmt.Sprintf("no activity for %s", o.Idle), nil
	}
	return "", nil
}

// expireLocked stops a session the caller holds locked if, read again,
// it is still live and still past o's limits.
func (m *Manager) expireLocked(ctx context.Context, id string, o ExpireOptions) (bool, error) {
	s, err := m.load(ctx, id)
	if err != nil {
		return false, err
	}
	if !s.state().Active() || s.state() == Provisioning {
		return false, nil
	}
	reason, err := m.expiry(ctx, s.rec, o)
	if err != nil || reason == "" {
		return false, err
	}
	if _, err := m.stop(ctx, s, reason, nil); err != nil {
		return false, err
	}
	m.log.Info("session expired", "session", id, "reason", reason)
	return true, nil
}

// MaxExtension caps the time one Extend adds: a day is more than any
// class, and a typo of minutes for hours should not keep a cluster for
// weeks.
const MaxExtension = 24 * time.Hour

// Extend adds by to the limit that ends live session id (its own time
// limit, or Expire's Max when it has none; idle expiry is not changed),
// recorded on its timeline with reason. by must be positive and at most
// MaxExtension.
func (m *Manager) Extend(ctx context.Context, id string, by time.Duration, reason string, progress Progress) (*Status, error) {
	if by <= 0 || by > MaxExtension {
		return nil, fmt.Errorf("extend session %s by %s: %w: more than zero and at most %s", id, by, ErrInvalidExtension, MaxExtension)
	}
	s, unlock, err := m.open(ctx, id, progress)
	if err != nil {
		return nil, err
	}
	defer unlock()
	s.work.Extended += by
	msg := fmt.Sprintf("time extended by %s (%s in all)", by, s.work.Extended)
	if reason != "" {
		msg += ": " + reason
	}
	ev := newEvent(KindExtended, s.exerciseID(), msg, ExtendData{By: by, Total: s.work.Extended, Reason: reason})
	if err := m.save(ctx, s, progress, ev); err != nil {
		return nil, fmt.Errorf("extend session %s: %w", id, err)
	}
	return m.status(ctx, s)
}

// ErrInvalidExtension is an extension of no time, or of too much.
var ErrInvalidExtension = errors.New("invalid extension")
