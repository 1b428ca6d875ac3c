package class

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestHashGate: one slot and a queue of one. A key has one attempt in
// flight; a full queue refuses at once; a trusted attempt has a queue of
// its own and is served first; a wait that runs out, or a caller that
// gives up, leaves the queue.
func TestHashGate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	g := newHashGate(1, 1, time.Minute)
	releaseA, err := g.acquire(ctx, "a", false)
	if err != nil {
		t.Fatalf("first attempt: %v", err)
	}
	if _, err := g.acquire(ctx, "a", false); !errors.Is(err, errBusy) {
		t.Errorf("a's second attempt while its first runs: got %v, want errBusy", err)
	}
	got := make(chan string, 3)
	wait := func(key string, trusted bool) {
		go func() {
			release, err := g.acquire(ctx, key, trusted)
			if err != nil {
				got <- key + ": " + err.Error()
				return
			}
			got <- key
			release()
		}()
	}
	wait("b", false)
	waitQueued(t, g, 1, 0)
	if _, err := g.acquire(ctx, "c", false); !errors.Is(err, errBusy) {
		t.Errorf("c with the queue full: got %v, want errBusy", err)
	}
	wait("trusted", true)
	waitQueued(t, g, 1, 1)
	releaseA()
	for i, want := range []string{"trusted", "b"} {
		if k := <-got; k != want {
			t.Errorf("served %d: got %s, want %s (trusted first)", i+1, k, want)
		}
	}
	waitQueued(t, g, 0, 0)
	if g.free != 1 || len(g.inflight) != 0 {
		t.Errorf("after every release: %d free, %d in flight; want 1 and 0", g.free, len(g.inflight))
	}

	// A wait that runs out, and a caller that gives up.
	short := newHashGate(1, 2, 50*time.Millisecond)
	hold, _ := short.acquire(ctx, "a", false)
	if _, err := short.acquire(ctx, "b", false); !errors.Is(err, errBusy) {
		t.Errorf("wait ran out: got %v, want errBusy", err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := short.acquire(gone, "c", false); !errors.Is(err, context.Canceled) {
		t.Errorf("caller gone: got %v, want context.Canceled", err)
	}
	hold()
	if short.free != 1 || len(short.normal) != 0 || len(short.inflight) != 0 {
		t.Errorf("after give-ups: %d free, %d queued, %d in flight; want 1, 0, 0", short.free, len(short.normal), len(short.inflight))
	}
}

// waitQueued waits until g holds normal and trusted waiters.
func waitQueued(t *testing.T, g *hashGate, normal, trusted int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		g.mu.Lock()
		n, tr := len(g.normal), len(g.trusted)
		g.mu.Unlock()
		if n == normal && tr == trusted {
			return
		}
	}
	t.Fatalf("gate: want %d waiting and %d trusted waiting", normal, trusted)
}
