package room

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
)

// Source gives the measured numbers a decision is made on (a Meter; a
// test passes its own).
type Source interface {
	Headroom(ctx context.Context) (Headroom, error)
	Cost(ctx context.Context) (Cost, error)
}

var _ Source = (*Meter)(nil)

// Options configure a Gate.
type Options struct {
	Policy Policy
	Source Source
	// Live counts the settled live clusters (sessions ready or in an
	// exercise); the Gate counts the starts it admitted itself.
	Live func(ctx context.Context) (int, error)
	// Every is how often a waiting start looks at the machine again when
	// nothing else wakes it; DefaultEvery when zero.
	Every time.Duration
	// MakeRoom, when set, is asked to give back a live cluster (put one
	// nobody uses to sleep) when the head of the queue waits on what live
	// clusters hold: memory, the budget, the CPU share or the cap, not the
	// starts under way. It says whether it gave one back; the Gate then
	// decides again at once. It asks again only after a start was
	// admitted or settle passed, so that one wait does not empty the
	// machine before the room made shows in the figures, nor look for an
	// idle session on every look.
	MakeRoom func(ctx context.Context) (bool, error)
	Logger   *slog.Logger
}

// settle is how long the Gate waits for the room it made to show before it
// asks for more.
const settle = 5 * time.Second

// ErrLeft is a start given up (its context ended) while it waited.
var ErrLeft = errors.New("left the queue")

// DefaultEvery is how often the head of the queue looks again.
const DefaultEvery = time.Second

// Gate admits starts of clusters one decision at a time, and queues the
// starts it cannot admit yet in arrival order: only the head of the queue
// is considered, so a later start never overtakes an earlier one.
type Gate struct {
	o Options

	decide sync.Mutex // one decision at a time, so each sees the starts before it

	mu       sync.Mutex
	queue    []*waiter
	starting int
	changed  chan struct{} // closed and replaced when the queue or the starts change
	last     Snapshot      // the numbers of the last decision
	stats    history
	madeRoom time.Time // when MakeRoom was last asked, zero after an admission
}

// waiter is one waiting start. It has a field because pointers to
// distinct zero-size values may compare equal.
type waiter struct{ since time.Time }

// Position is where a waiting start stands: Position of Length (1 is
// the head), and about how long until it starts (0 when nothing measured
// yet allows an estimate).
type Position struct {
	Position int               `json:"position"`
	Length   int               `json:"length"`
	Estimate jsonconv.Duration `json:"estimateMs"`
	// Reason is the limit that holds the head back (ReasonCap, ...).
	Reason string `json:"reason,omitempty"`
}

// Snapshot is what the Gate knows: the queue and the numbers its last
// decision was made on (what an instructor's board shows).
type Snapshot struct {
	Queue    int `json:"queue"`
	Starting int `json:"starting"`
	Live     int `json:"live"`
	// Estimate is about how long a start that arrived now would wait.
	Estimate jsonconv.Duration `json:"estimateMs"`
	Reason   string            `json:"reason,omitempty"`
	Headroom Headroom          `json:"headroom"`
	Cost     Cost              `json:"cost"`
	// StartTook is the mean of the measured start durations; FreeEvery,
	// the measured mean time between clusters freeing up.
	StartTook   jsonconv.Duration `json:"startTookMs"`
	FreeEvery   jsonconv.Duration `json:"freeEveryMs"`
	MaxClusters int               `json:"maxClusters,omitempty"`
	At          time.Time         `json:"at,omitzero"`
}

// New returns a Gate of o.
func New(o Options) *Gate {
	if o.Every <= 0 {
		o.Every = DefaultEvery
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Gate{o: o, changed: make(chan struct{}), stats: history{began: time.Now()}}
}

// Ticket is an admitted start; Done says it ended.
type Ticket struct {
	g     *Gate
	began time.Time
	once  sync.Once
}

// Done ends the start: its cluster is live now (ok) or was never made.
// A successful start's duration is measured for the estimates.
func (t *Ticket) Done(ok bool) {
	if t == nil {
		return
	}
	t.once.Do(func() {
		t.g.mu.Lock()
		t.g.starting--
		if ok {
			t.g.stats.started(time.Since(t.began))
		}
		t.g.mu.Unlock()
		t.g.wake()
	})
}

// Wait admits a start when the machine has room for it, after every start
// that waited before it. While it waits, notify hears its position each
// time the position or the estimate changes (on the caller's goroutine).
// When ctx ends first, the start leaves the queue and Wait returns ctx's
// error.
func (g *Gate) Wait(ctx context.Context, notify func(Position)) (*Ticket, error) {
	w := &waiter{since: time.Now()}
	g.mu.Lock()
	g.queue = append(g.queue, w)
	g.mu.Unlock()
	g.wake()
	var told Position
	for {
		t, pos, err := g.try(ctx, w)
		if t != nil || err != nil {
			if err != nil {
				g.leave(w)
			}
			return t, err
		}
		g.mu.Lock()
		changed := g.changed
		g.mu.Unlock()
		if notify != nil && moved(told, pos) {
			notify(pos)
			told = pos
		}
		select {
		case <-ctx.Done():
			g.leave(w)
			return nil, fmt.Errorf("wait for room for a cluster: %w: %w", ErrLeft, ctx.Err())
		case <-changed:
		case <-time.After(g.o.Every):
		}
	}
}

// moved says whether a waiter should hear pos after told: its place
// changed, or the estimate by a second or more (finer would only flicker).
func moved(told, pos Position) bool {
	d := (told.Estimate - pos.Estimate).Duration()
	return told.Position != pos.Position || told.Length != pos.Length || told.Reason != pos.Reason ||
		d >= time.Second || d <= -time.Second || (told.Estimate == 0) != (pos.Estimate == 0)
}

// Try admits a start only if nobody waits and the machine has room now
// (a warm pool's refill, which must not take a learner's turn).
func (g *Gate) Try(ctx context.Context) (*Ticket, bool, error) {
	g.decide.Lock()
	defer g.decide.Unlock()
	g.mu.Lock()
	waiting := len(g.queue)
	g.mu.Unlock()
	if waiting > 0 {
		return nil, false, nil
	}
	d, err := g.measure(ctx)
	if err != nil || !d.Admit {
		return nil, false, err
	}
	return g.admit(nil), true, nil
}

// try decides for w if it heads the queue, and otherwise says where it
// stands.
func (g *Gate) try(ctx context.Context, w *waiter) (*Ticket, Position, error) {
	g.decide.Lock()
	defer g.decide.Unlock()
	g.mu.Lock()
	head := len(g.queue) > 0 && g.queue[0] == w
	g.mu.Unlock()
	if head {
		d, err := g.measure(ctx)
		if err != nil {
			return nil, Position{}, err
		}
		if !d.Admit && g.makeRoom(ctx, d) {
			if d, err = g.measure(ctx); err != nil {
				return nil, Position{}, err
			}
		}
		if d.Admit {
			return g.admit(w), Position{}, nil
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.queue, w)
	return nil, Position{Position: i + 1, Length: len(g.queue), Estimate: jsonconv.Duration(g.stats.estimate(i+1, time.Now())), Reason: g.last.Reason}, nil
}

// makeRoom asks Options.MakeRoom for a live cluster back when d queued the
// head on what live clusters hold, and says whether it got one.
func (g *Gate) makeRoom(ctx context.Context, d Decision) bool {
	if g.o.MakeRoom == nil || d.Reason == ReasonStarts {
		return false
	}
	g.mu.Lock()
	recent := time.Since(g.madeRoom) < settle
	g.mu.Unlock()
	if recent {
		return false
	}
	made, err := g.o.MakeRoom(ctx)
	if err != nil {
		g.o.Logger.Warn("make room for a start", "err", err)
	}
	g.mu.Lock()
	g.madeRoom = time.Now()
	g.mu.Unlock()
	return made
}

// measure samples the machine and applies the policy, keeping the
// numbers for Snapshot.
func (g *Gate) measure(ctx context.Context) (Decision, error) {
	h, err := g.o.Source.Headroom(ctx)
	if err != nil {
		return Decision{}, err
	}
	c, err := g.o.Source.Cost(ctx)
	if err != nil {
		return Decision{}, err
	}
	live := 0
	if g.o.Live != nil {
		if live, err = g.o.Live(ctx); err != nil {
			return Decision{}, fmt.Errorf("count live clusters: %w", err)
		}
	}
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stats.observe(live, now)
	d := g.o.Policy.Decide(Inputs{Live: live, Starting: g.starting, Headroom: h, Cost: c})
	g.last = Snapshot{Live: live, Headroom: h, Cost: c, Reason: d.Reason, At: now}
	if !d.Admit {
		g.o.Logger.Debug("start queued", "reason", d.Reason, "live", live, "starting", g.starting,
			"memAvailable", h.MemAvailable, "idleCores", h.IdleCores, "clusterMemory", c.Memory, "clusterCPU", c.CPU)
	}
	return d, nil
}

// admit counts a start as under way and takes w (nil for Try) off the
// queue.
func (g *Gate) admit(w *waiter) *Ticket {
	g.mu.Lock()
	if w != nil {
		g.queue = slices.DeleteFunc(g.queue, func(x *waiter) bool { return x == w })
	}
	g.starting++
	g.madeRoom = time.Time{}
	g.mu.Unlock()
	g.wake()
	return &Ticket{g: g, began: time.Now()}
}

func (g *Gate) leave(w *waiter) {
	g.mu.Lock()
	g.queue = slices.DeleteFunc(g.queue, func(x *waiter) bool { return x == w })
	g.mu.Unlock()
	g.wake()
}

// wake tells every waiter to look again.
func (g *Gate) wake() {
	g.mu.Lock()
	close(g.changed)
	g.changed = make(chan struct{})
	g.mu.Unlock()
}

// Queued returns how many starts wait.
func (g *Gate) Queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// Snapshot returns the queue and the numbers of the last decision,
// measuring afresh when none was made in the last few seconds (an idle
// queue makes no decisions).
func (g *Gate) Snapshot(ctx context.Context) (Snapshot, error) {
	g.mu.Lock()
	stale := time.Since(g.last.At) > 5*g.o.Every
	g.mu.Unlock()
	if stale {
		g.decide.Lock()
		_, err := g.measure(ctx)
		g.decide.Unlock()
		if err != nil {
			return Snapshot{}, err
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.last
	s.Queue, s.Starting, s.MaxClusters = len(g.queue), g.starting, g.o.Policy.MaxClusters
	s.Estimate = jsonconv.Duration(g.stats.estimate(len(g.queue)+1, time.Now()))
	s.StartTook, s.FreeEvery = jsonconv.Duration(g.stats.startMean()), jsonconv.Duration(g.stats.freeEvery(time.Now()))
	return s, nil
}
