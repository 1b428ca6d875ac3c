package app

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/session"
)

// ClassPool names the warm pool of the class whose id is classID
// (session.StartOptions.Pool).
func ClassPool(classID string) string { return classID }

// ClassPools keeps each class's warm sessions: one Keeper per class that
// asks for warm sessions (class.Spec.Warm) and is not closed or over,
// started, resized and stopped as classes are created, edited and closed.
// A class that closes has its warm sessions stopped and their clusters
// deleted. Refills take only the machine's free room (see Admission).
type ClassPools struct {
	a    *App
	o    PoolOptions
	poke chan struct{}

	mu      sync.Mutex
	keepers map[string]*classKeeper // by class id
	cancel  context.CancelFunc
	done    chan struct{}
}

type classKeeper struct {
	k     *Keeper
	sizes map[string]int
}

// DefaultClassPoolsEvery is how often the classes are read again when
// nothing pokes: an edit made by another oplab (the command line) shows
// within this.
const DefaultClassPoolsEvery = time.Minute

// ClassPools returns the keeper of every class's pool; o's Pool and Sizes
// are ignored (each class has its own), its Every is how often each
// class's pool is looked at, and Report hears each class's ready count
// with the pool named.
func (a *App) ClassPools(o PoolOptions) *ClassPools {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &ClassPools{a: a, o: o, poke: make(chan struct{}, 1), keepers: map[string]*classKeeper{}}
}

// Start syncs the pools with the classes now, then every `every`
// (DefaultClassPoolsEvery when zero) and when poked, until Stop.
func (p *ClassPools) Start(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultClassPoolsEvery
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancel != nil {
		return
	}
	ctx, p.cancel = context.WithCancel(ctx)
	p.done = make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if err := p.Sync(ctx); err != nil && ctx.Err() == nil {
				p.o.Logger.Warn("class warm pools", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-p.poke:
			}
		}
	}()
}

// Poke makes the pools follow the classes now (after a class was edited
// or closed).
func (p *ClassPools) Poke() {
	select {
	case p.poke <- struct{}{}:
	default:
	}
}

// Stop stops every keeper and waits. Warm sessions stay for the next
// start of the server, like the learners' sessions.
func (p *ClassPools) Stop() {
	p.mu.Lock()
	cancel, done := p.cancel, p.done
	p.cancel = nil
	p.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, ck := range p.keepers {
		ck.k.Stop()
		delete(p.keepers, id)
	}
}

// Sync starts a keeper for each class that wants warm sessions and has
// none, restarts one whose sizes changed, and stops the keepers of
// classes that no longer want them, stopping their warm sessions.
func (p *ClassPools) Sync(ctx context.Context) error {
	classes, err := p.a.classes.List(ctx, class.LocalAdmin())
	if err != nil {
		return err
	}
	want := map[string]map[string]int{}
	for _, c := range classes {
		if len(c.Warm) > 0 && c.State != class.StateClosed && c.State != class.StateEnded {
			want[c.ID] = c.Warm
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, ck := range p.keepers {
		if sizes, ok := want[id]; ok && maps.Equal(sizes, ck.sizes) {
			continue
		}
		ck.k.Stop()
		delete(p.keepers, id)
		if err := p.drain(ctx, id, want[id]); err != nil {
			return err
		}
	}
	for id, sizes := range want {
		if _, ok := p.keepers[id]; ok {
			continue
		}
		o := p.o
		o.Pool, o.Sizes = ClassPool(id), sizes
		k := p.a.KeepWarm(o)
		k.Start(context.WithoutCancel(ctx))
		p.keepers[id] = &classKeeper{k: k, sizes: sizes}
	}
	return nil
}

// drain stops class id's warm sessions beyond sizes (all of them when
// sizes is nil): a closed class's, or a lab's the instructor lowered.
func (p *ClassPools) drain(ctx context.Context, id string, sizes map[string]int) error {
	list, err := p.a.sessions.Sessions(ctx, session.PoolLearner(ClassPool(id)))
	if err != nil {
		return err
	}
	kept := map[string]int{}
	for _, s := range list {
		if !s.State.Active() {
			continue
		}
		if kept[s.Lab] < sizes[s.Lab] {
			kept[s.Lab]++
			continue
		}
		if _, err := p.a.sessions.Stop(ctx, s.ID, "its class no longer keeps it warm", nil); err != nil {
			return err
		}
		p.o.Logger.Info("warm session stopped", "class", id, "session", s.ID)
	}
	return nil
}

// Pools returns the ids of the classes whose pools are kept now.
func (p *ClassPools) Pools() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Sorted(maps.Keys(p.keepers))
}
