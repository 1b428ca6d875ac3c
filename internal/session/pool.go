package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/store"
)

// The warm pool: sessions started ahead of their learners, so that a
// Start takes a ready one (a cluster with the operator installed and the
// lab set up to its first exercise) in the time of one store update
// instead of a cluster's creation. A warm session is an ordinary session
// whose learner is the pool's (PoolLearner); Start hands it to the learner
// who asks, and from then on it is theirs like any other. Nothing else
// tells them apart, so recovery, expiry and the clusters' clean-up treat
// them alike.

// poolPrefix marks the learner of a warm session. Learner names of a
// front end never contain a colon.
const poolPrefix = "pool:"

// PoolLearner is the learner that holds a pool's warm sessions.
func PoolLearner(pool string) string { return poolPrefix + pool }

// IsPool reports whether learner is a pool's.
func IsPool(learner string) bool { return strings.HasPrefix(learner, poolPrefix) }

// Prepare starts a warm session of lab for pool: provisioned and set up
// like any start, then kept ready for Start to hand out. admit, when set,
// is asked for room first (see StartOptions.Admit).
func (m *Manager) Prepare(ctx context.Context, pool, labID string, admit Admit, progress Progress) (*Status, error) {
	return m.Start(ctx, StartOptions{Learner: PoolLearner(pool), Lab: labID, AllowMany: true, Admit: admit}, progress)
}

// Warm counts pool's sessions of lab that are ready to hand out and that
// are still being prepared.
func (m *Manager) Warm(ctx context.Context, pool, labID string) (ready, preparing int, err error) {
	list, err := m.o.Store.Sessions(ctx, store.Filter{Learner: PoolLearner(pool), Lab: labID, States: []string{string(Ready), string(Provisioning)}})
	if err != nil {
		return 0, 0, err
	}
	for _, rec := range list {
		if State(rec.State) == Ready {
			ready++
		} else {
			preparing++
		}
	}
	return ready, preparing, nil
}

// claim hands a warm session of l to o.Learner, if the pool has one ready:
// ok false means none was, and the caller starts one of its own. Two
// claims of one session cannot both win: the store refuses the second
// update.
func (m *Manager) claim(ctx context.Context, l *lab.Lab, o StartOptions, progress Progress) (*Status, bool, error) {
	list, err := m.o.Store.Sessions(ctx, store.Filter{Learner: PoolLearner(o.Pool), Lab: l.ID, States: []string{string(Ready)}})
	if err != nil {
		return nil, false, err
	}
	// Oldest first: sessions are listed newest first.
	for i := len(list) - 1; i >= 0; i-- {
		st, err := m.claimOne(ctx, list[i].ID, o, progress)
		switch {
		case err == nil:
			return st, true, nil
		case errors.Is(err, errTaken):
			continue // another start took it, or it is busy: try the next
		default:
			return nil, false, err
		}
	}
	return nil, false, nil
}

var errTaken = errors.New("warm session taken")

// claimWait is how long a start waits for a warm session that is busy
// before it tries the next (or makes a cluster of its own).
const claimWait = 5 * time.Second

func (m *Manager) claimOne(ctx context.Context, id string, o StartOptions, progress Progress) (*Status, error) {
	// A warm session is stored Ready a moment before the start that made
	// it lets go of it (it still writes the learner's kubeconfig): wait that
	// moment out rather than start a cold cluster beside a ready one.
	lctx, cancel := context.WithTimeout(ctx, claimWait)
	defer cancel()
	unlock, err := m.lock(lctx, id)
	if err != nil {
		return nil, errTaken
	}
	defer unlock()
	s, err := m.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if s.rec.Learner != PoolLearner(o.Pool) || s.state() != Ready {
		return nil, errTaken
	}
	s.rec.Learner, s.rec.Lang = o.Learner, o.Lang
	s.work.Claimed, s.work.TimeLimit = time.Now().UTC(), o.TimeLimit
	ev := newEvent(KindState, "", "ready: handed to "+o.Learner+" from the warm pool", StateData{From: Ready, To: Ready, Reason: "from the warm pool"})
	if err := m.save(ctx, s, progress, ev); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil, errTaken
		}
		return nil, fmt.Errorf("claim warm session %s: %w", id, err)
	}
	// A warm session nobody claimed for a while sleeps, frozen: the
	// learner's start wakes it, in milliseconds.
	if err := m.wakeLocked(ctx, s, progress); err != nil {
		return nil, err
	}
	if o.Created != nil {
		// The session is the learner's now, whatever its hook says.
		if err := o.Created(ctx, id); err != nil {
			return nil, fmt.Errorf("session %s: %w", id, err)
		}
	}
	return m.status(ctx, s)
}
