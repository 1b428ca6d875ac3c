package room

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// machine is a Source and a live count the test sets.
type machine struct {
	live atomic.Int64
	mem  atomic.Uint64
}

func (m *machine) Headroom(context.Context) (Headroom, error) {
	return Headroom{MemAvailable: m.mem.Load(), IdleCores: 2, Cores: 2}, nil
}

func (m *machine) Cost(context.Context) (Cost, error) {
	return Cost{Memory: 100 * MiB, CPU: 0.01, Clusters: 1}, nil
}

func (m *machine) count(context.Context) (int, error) { return int(m.live.Load()), nil }

func newGate(t *testing.T, maxClusters int) (*Gate, *machine) {
	t.Helper()
	m := &machine{}
	m.mem.Store(64 << 30)
	g := New(Options{Policy: Policy{MaxClusters: maxClusters}, Source: m, Live: m.count, Every: 5 * time.Millisecond})
	return g, m
}

// waiting is a start waiting at the gate, with what it heard.
type waiting struct {
	cancel context.CancelFunc
	done   chan struct{}
	ticket *Ticket
	err    error

	mu    sync.Mutex
	heard []Position
}

func (w *waiting) last() Position {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.heard) == 0 {
		return Position{}
	}
	return w.heard[len(w.heard)-1]
}

func wait(t *testing.T, g *Gate) *waiting {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	w := &waiting{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.ticket, w.err = g.Wait(ctx, func(p Position) {
			w.mu.Lock()
			w.heard = append(w.heard, p)
			w.mu.Unlock()
		})
	}()
	t.Cleanup(func() { cancel(); <-w.done; w.ticket.Done(false) })
	return w
}

// eventually polls cond for a few seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func admitted(w *waiting) bool {
	select {
	case <-w.done:
		return w.ticket != nil
	default:
		return false
	}
}

func TestGateQueueInOrder(t *testing.T) {
	t.Parallel()
	g, m := newGate(t, 1)
	m.live.Store(1) // full
	var ws []*waiting
	for i := range 3 {
		w := wait(t, g)
		eventually(t, "the start is queued", func() bool { return w.last().Position == i+1 })
		ws = append(ws, w)
	}
	for i, w := range ws {
		if got, want := w.last(), (Position{Position: i + 1, Length: 3, Reason: ReasonCap}); got != want {
			t.Errorf("start %d: got %+v, want %+v", i, got, want)
		}
	}

	m.live.Store(0) // a cluster freed up: the head starts, only the head
	eventually(t, "the first start is admitted", func() bool { return admitted(ws[0]) })
	eventually(t, "the second moves up", func() bool { return ws[1].last().Position == 1 })
	if admitted(ws[1]) || admitted(ws[2]) {
		t.Fatalf("got later starts admitted while the first one starts, want them queued (cap 1)")
	}
	// Each waiter hears its own update, so the third may hear a moment after
	// the second: wait for it, then judge what it heard.
	eventually(t, "the third moves up", func() bool { return ws[2].last().Length == 2 })
	if got := ws[2].last(); got.Position != 2 || got.Length != 2 {
		t.Errorf("third start: got %+v, want position 2 of 2", got)
	}
	if got := ws[2].last().Estimate; got <= 0 {
		t.Errorf("third start: got estimate %v after a cluster freed up, want one", got)
	}

	ws[2].cancel() // the third learner leaves the page
	<-ws[2].done
	if !errors.Is(ws[2].err, context.Canceled) {
		t.Errorf("left start: got %v, want context.Canceled", ws[2].err)
	}
	ws[0].ticket.Done(true)
	m.live.Store(1) // the first one's cluster is live
	eventually(t, "the second learner sees the queue shrink", func() bool { return ws[1].last().Length == 1 })
	if admitted(ws[1]) {
		t.Fatalf("got the second start admitted at the cap, want it queued")
	}
	var s Snapshot
	eventually(t, "the gate sees the first cluster live", func() bool {
		var err error
		s, err = g.Snapshot(t.Context())
		return err == nil && s.Live == 1
	})
	if s.Queue != 1 || s.Starting != 0 || s.Live != 1 || s.StartTook <= 0 || s.FreeEvery <= 0 {
		t.Errorf("got snapshot %+v, want 1 queued, 0 starting, 1 live, a start and a free measured", s)
	}

	m.live.Store(0)
	eventually(t, "the second start is admitted", func() bool { return admitted(ws[1]) })
}

func TestGateTryYieldsToWaiters(t *testing.T) {
	t.Parallel()
	g, m := newGate(t, 0)
	m.mem.Store(50 * MiB) // less than a cluster
	w := wait(t, g)
	eventually(t, "the start is queued", func() bool { return w.last().Position == 1 })
	if got := w.last().Reason; got != ReasonMemory {
		t.Errorf("got reason %q, want %q", got, ReasonMemory)
	}
	m.mem.Store(64 << 30)
	// The waiter may be admitted first, or Try may see it waiting; Try
	// never takes its turn.
	if tk, ok, err := g.Try(t.Context()); err != nil || ok && !admitted(w) {
		t.Errorf("got Try admitted %v (err %v) ahead of a waiting start, want refused", ok, err)
	} else {
		tk.Done(false)
	}
	eventually(t, "the waiting start is admitted", func() bool { return admitted(w) })
	tk, ok, err := g.Try(t.Context())
	if err != nil || !ok {
		t.Fatalf("got Try %v, %v with nobody waiting and room, want admitted", ok, err)
	}
	tk.Done(false)
}

func TestGateStartingReservesRoom(t *testing.T) {
	t.Parallel()
	g, m := newGate(t, 0)
	m.mem.Store(250 * MiB) // two clusters of 100 MiB, no margin: not three
	var ts []*Ticket
	for range 2 {
		tk, ok, err := g.Try(t.Context())
		if err != nil || !ok {
			t.Fatalf("got %v, %v, want admitted", ok, err)
		}
		ts = append(ts, tk)
	}
	if _, ok, _ := g.Try(t.Context()); ok {
		t.Errorf("got a third start admitted while two start in 250 MiB, want refused")
	}
	ts[0].Done(false)
	ts[0].Done(false) // twice counts once
	tk, ok, err := g.Try(t.Context())
	if err != nil || !ok {
		t.Fatalf("got %v, %v after a start ended, want admitted", ok, err)
	}
	tk.Done(false)
	ts[1].Done(false)
}

func TestGateMakesRoom(t *testing.T) {
	t.Parallel()
	m := &machine{}
	m.mem.Store(64 << 30)
	m.live.Store(2) // at the cap: two live clusters
	var asked atomic.Int64
	idle := atomic.Int64{}
	idle.Store(1) // one live cluster nobody uses
	g := New(Options{Policy: Policy{MaxClusters: 2, StartCores: 1}, Source: m, Live: m.count, Every: 5 * time.Millisecond,
		MakeRoom: func(context.Context) (bool, error) {
			asked.Add(1)
			if idle.Load() == 0 {
				return false, nil
			}
			idle.Add(-1)
			m.live.Add(-1) // put to sleep: no longer live
			return true, nil
		}})

	// The head waits on the cap: the idle cluster gives its room at once.
	w := wait(t, g)
	eventually(t, "the start is admitted in the room made", func() bool { return admitted(w) })
	if got := m.live.Load(); got != 1 {
		t.Fatalf("got %d live after making room, want 1", got)
	}

	// The next waits on the start under way, which no sleeper frees: it is
	// not asked for room.
	before := asked.Load()
	w2 := wait(t, g)
	eventually(t, "the second start is queued", func() bool { return w2.last().Position == 1 })
	if got := w2.last().Reason; got != ReasonCap {
		t.Fatalf("got reason %q, want %q (one live, one starting, cap 2)", got, ReasonCap)
	}
	// At the cap with nobody idle, it asks, gets nothing, and waits; it
	// asks again only after settle, not on every look.
	time.Sleep(50 * time.Millisecond)
	if n := asked.Load() - before; n != 1 {
		t.Errorf("got room asked %d times within 50 ms with none to give, want once (then after %s)", n, settle)
	}
	if admitted(w2) {
		t.Fatalf("got the second start admitted with no room made, want it queued")
	}
	w.ticket.Done(true)
	m.live.Add(1) // the first start's cluster is live: two live at the cap
	idle.Store(1)
	time.Sleep(20 * time.Millisecond)
	if admitted(w2) {
		t.Fatalf("got the second start admitted at once, want it to wait for settle before room is asked again")
	}
	eventually(t, "the second start is admitted in room made after settle", func() bool { return admitted(w2) })
}

func TestGateMakesNoRoomForStarts(t *testing.T) {
	t.Parallel()
	m := &machine{}
	m.mem.Store(64 << 30)
	var asked atomic.Int64
	g := New(Options{Policy: Policy{StartCores: 2}, Source: m, Live: m.count, Every: 5 * time.Millisecond,
		MakeRoom: func(context.Context) (bool, error) { asked.Add(1); return true, nil }})
	tk, ok, err := g.Try(t.Context())
	if err != nil || !ok {
		t.Fatalf("got %v, %v, want the first start admitted", ok, err)
	}
	defer tk.Done(false)
	w := wait(t, g) // a start takes both cores: one at a time
	eventually(t, "the start is queued", func() bool { return w.last().Position == 1 })
	if got := w.last().Reason; got != ReasonStarts {
		t.Fatalf("got reason %q, want %q", got, ReasonStarts)
	}
	time.Sleep(20 * time.Millisecond)
	if n := asked.Load(); n != 0 {
		t.Errorf("got room asked %d times for a start waiting on the starts under way, want never: a sleeper frees none", n)
	}
}
