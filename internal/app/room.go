package app

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/room"
	"oplab.dev/oplab/internal/session"
)

// Admission says how starts are admitted onto the machine (see package
// admission): the zero value measures this machine with the default
// margins and has no hard cap.
type Admission struct {
	// MaxClusters caps the live clusters, learners' and warm ones; no cap
	// when zero.
	MaxClusters int
	// MemoryMargin is memory kept free; when zero,
	// room.DefaultMemoryMargin on this machine and none on a host
	// cluster, whose figures are requests.
	MemoryMargin uint64
	// CPUShare is the share of the cores clusters may take running;
	// room.DefaultCPUShare when zero, no CPU rule when negative.
	CPUShare float64
	// MinIdleCores queues starts while fewer cores are idle; off when zero.
	MinIdleCores float64
	// Source measures the machine: when nil, the provider's host (the host
	// cluster's requests on the pods provider), else /proc and the
	// clusters under the data directory.
	Source room.Source
	// Every is how often a waiting start looks again;
	// room.DefaultEvery when zero.
	Every time.Duration
	// MakeRoomAfter: a start or a wake that waits for the room live
	// clusters hold stops the cluster of the session nobody has looked at
	// for longest, if nobody has for this long (session.MakeRoom); its
	// learner's next request wakes it from disk. Zero stops none.
	MakeRoomAfter time.Duration
}

// DefaultMakeRoomAfter is oplab serve's: a session nobody has looked at
// for two minutes (no page of it open, no command of its learner) gives
// its room to a learner who waits for one.
const DefaultMakeRoomAfter = 2 * time.Minute

// ErrNoRoom is a warm session's preparation put off: the machine has no
// room for it now, or learners wait for room.
var ErrNoRoom = errors.New("no room on the machine")

// newGate builds the admission gate of c, whose clusters provider makes;
// makeRoom gives a live cluster back (App.makeRoom).
func newGate(c Config, provider *cluster.Provider, live func(context.Context) (int, error), makeRoom func(context.Context) (bool, error)) (*room.Gate, error) {
	ad := c.Admission
	// On a host cluster the figures are requests, which the scheduler
	// honours: no margin is kept beyond them.
	margin := uint64(room.DefaultMemoryMargin)
	if ad.Source == nil {
		if room, ok := provider.Room(); ok {
			ad.Source, margin = room, 0
		}
	}
	if ad.Source == nil {
		m, err := room.NewMeter(room.MeterOptions{ClusterDir: filepath.Join(c.DataDir, "clusters")})
		if err != nil {
			return nil, err
		}
		ad.Source = m
	}
	p := room.Policy{MaxClusters: ad.MaxClusters, MemoryMargin: ad.MemoryMargin, CPUShare: ad.CPUShare, MinIdleCores: ad.MinIdleCores}
	// A cell may grow to its budget: the machine is never promised twice.
	if b, ok := provider.Budget(); ok {
		p.Budget = uint64(b.Memory)
	}
	if p.MemoryMargin == 0 {
		p.MemoryMargin = margin
	}
	if p.StartCores == 0 {
		p.StartCores = room.DefaultStartCores
	}
	switch {
	case p.CPUShare == 0:
		p.CPUShare = room.DefaultCPUShare
	case p.CPUShare < 0:
		p.CPUShare = 0
	}
	o := room.Options{Policy: p, Source: ad.Source, Live: live, Every: ad.Every, Logger: c.Logger}
	if ad.MakeRoomAfter > 0 {
		o.MakeRoom = makeRoom
	}
	return room.New(o), nil
}

// makeRoom puts to sleep, stopped, the session nobody has looked at for
// longest, if nobody has for Admission.MakeRoomAfter: a start or a wake
// waits for the room it holds. A session a page follows is looked at
// (see Runtime).
func (a *App) makeRoom(ctx context.Context) (bool, error) {
	o := session.RoomOptions{After: a.cfg.Admission.MakeRoomAfter}
	if w := a.watched.Load(); w != nil {
		o.Watched = *w
	}
	began := time.Now()
	id, err := a.sessions.MakeRoom(ctx, o)
	if id != "" {
		a.log.Info("session put to sleep to make room for another", "session", id, "took", time.Since(began))
	}
	return id != "", err
}

// liveClusters counts the sessions whose clusters run and are made:
// ready or in an exercise, a learner's or warm, but for those asleep with
// their clusters stopped, which hold no memory. The gate counts the
// starts under way itself.
func (a *App) liveClusters(ctx context.Context) (int, error) {
	counts, err := a.store.CountSessions(ctx)
	if err != nil {
		return 0, err
	}
	stopped, err := a.sessions.Stopped(ctx)
	if err != nil {
		return 0, err
	}
	return counts[string(session.Ready)] + counts[string(session.InExercise)] - stopped, nil
}

// admitWait is a learner's start's session.Admit: it waits its turn in
// the queue, telling progress where it stands.
func (a *App) admitWait(ctx context.Context, progress session.Progress) (func(bool), error) {
	began := time.Now()
	t, err := a.gate.Wait(ctx, func(p room.Position) {
		if progress != nil {
			progress(session.QueueUpdate(session.QueueData{Position: p.Position, Length: p.Length,
				Estimate: p.Estimate, Reason: p.Reason}))
		}
	})
	if err != nil {
		return nil, err
	}
	if waited := time.Since(began); waited >= time.Second {
		a.log.Info("start admitted after waiting for room", "waited", waited)
	}
	return t.Done, nil
}

// AdmitWithin returns the admission of a start whose waiting in the queue
// ends with wait as well (the request of a page that may be left), while
// the start itself, once admitted, runs on its own context to the end, so
// that no session is left half-made.
func (a *App) AdmitWithin(wait context.Context) session.Admit {
	return func(ctx context.Context, progress session.Progress) (func(bool), error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(wait, cancel)
		defer stop()
		return a.admitWait(ctx, progress)
	}
}

// ErrLeftQueue is a start given up while it waited for room.
var ErrLeftQueue = room.ErrLeft

// admitNow is a warm session's session.Admit: it never waits, and never
// takes a waiting learner's turn.
func (a *App) admitNow(ctx context.Context, _ session.Progress) (func(bool), error) {
	t, ok, err := a.gate.Try(ctx)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoRoom
	}
	return t.Done, nil
}

// Capacity is the machine as admission sees it: the queue, its estimate,
// the measured cost of a cluster and the headroom left.
type Capacity = room.Snapshot

// Capacity returns the machine's capacity now.
func (a *App) Capacity(ctx context.Context) (Capacity, error) {
	return a.gate.Snapshot(ctx)
}

// Queued returns how many starts wait for room (for a metric).
func (a *App) Queued() int { return a.gate.Queued() }
