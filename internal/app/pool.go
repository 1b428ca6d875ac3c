package app

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"
)

// PoolOptions say how many warm sessions of which labs to keep ready.
type PoolOptions struct {
	// Pool names the pool (session.StartOptions.Pool); "" is the default.
	Pool string
	// Sizes is the number of warm sessions to keep per lab.
	Sizes map[string]int
	// Every is how often the pool is looked at when nothing pokes it;
	// DefaultPoolEvery when zero.
	Every time.Duration
	// Report hears the number of ready warm sessions of a lab after each
	// look (for a metric); nil for none.
	Report func(lab string, ready int)
	Logger *slog.Logger
}

// DefaultPoolEvery is how often a Keeper looks at its pool unpoked.
const DefaultPoolEvery = 5 * time.Second

// Keeper keeps a warm pool filled: one session prepared at a time, so
// that refilling never takes more of the machine than one start does.
type Keeper struct {
	a    *App
	o    PoolOptions
	poke chan struct{}

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// KeepWarm returns a Keeper of o's pool; Start starts it.
func (a *App) KeepWarm(o PoolOptions) *Keeper {
	if o.Every <= 0 {
		o.Every = DefaultPoolEvery
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Keeper{a: a, o: o, poke: make(chan struct{}, 1)}
}

// Start fills the pool in the background until ctx ends or Stop.
func (k *Keeper) Start(ctx context.Context) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cancel != nil {
		return
	}
	ctx, k.cancel = context.WithCancel(ctx)
	k.done = make(chan struct{})
	go func() {
		defer close(k.done)
		t := time.NewTicker(k.o.Every)
		defer t.Stop()
		for {
			k.fill(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-k.poke:
			}
		}
	}()
}

// Poke makes the Keeper look at the pool now (after a start took from it).
func (k *Keeper) Poke() {
	select {
	case k.poke <- struct{}{}:
	default:
	}
}

// Stop stops filling and waits for a preparation under way to end.
func (k *Keeper) Stop() {
	k.mu.Lock()
	cancel, done := k.cancel, k.done
	k.cancel = nil
	k.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// fill prepares warm sessions until every lab has its number, or the
// machine has no room (see Admission).
func (k *Keeper) fill(ctx context.Context) {
	for _, lab := range slices.Sorted(maps.Keys(k.o.Sizes)) {
		for ctx.Err() == nil {
			ready, preparing, err := k.a.sessions.Warm(ctx, k.o.Pool, lab)
			if err != nil {
				k.o.Logger.Warn("warm pool", "lab", lab, "err", err)
				return
			}
			if k.o.Report != nil {
				k.o.Report(lab, ready)
			}
			if ready+preparing >= k.o.Sizes[lab] {
				break
			}
			began := time.Now()
			// Refilling takes the machine's room only when no learner
			// waits for it.
			st, err := k.a.sessions.Prepare(ctx, k.o.Pool, lab, k.a.admitNow, nil)
			if errors.Is(err, ErrNoRoom) {
				return
			}
			if err != nil {
				// A failed preparation leaves a failed session and no
				// cluster; wait for the next look rather than spin.
				k.o.Logger.Warn("prepare a warm session", "lab", lab, "err", err)
				return
			}
			k.o.Logger.Info("warm session ready", "lab", lab, "session", st.ID, "took", time.Since(began).Round(time.Millisecond))
		}
	}
}
