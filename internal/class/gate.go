package class

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"
)

// Defaults of the password hashing gate.
const (
	// maxHashSlots caps the default number of hashes that run at once
	// whatever the machine: each holds argonMemory (64 MiB).
	maxHashSlots = 4
	// hashQueuePerSlot is how many attempts may wait per slot by
	// default: the wait stays within a few hashes' time.
	hashQueuePerSlot = 8
	// DefaultHashWait bounds the time an attempt waits for a slot.
	DefaultHashWait = 5 * time.Second
	// busyRetry is what a refused attempt is told to wait.
	busyRetry = time.Second
)

// defaultHashSlots is one hash per two cores (a hash runs argonThreads
// lanes), at least one and at most maxHashSlots.
func defaultHashSlots() int {
	return min(max(runtime.GOMAXPROCS(0)/argonThreads, 1), maxHashSlots)
}

// errBusy: the gate refused an attempt (its queue is full, the client
// already has an attempt in flight, or the wait ran out).
var errBusy = errors.New("sign-in busy")

// hashGate bounds the password hashes that run at once, and so the
// memory they hold (slots × 64 MiB). Attempts beyond the slots wait in a
// short queue, first come first served, with attempts from a trusted
// browser served first; beyond the queue they are refused at once. A key
// (a client's address) has at most one attempt waiting or running, so
// one client cannot fill the queue and starve the others.
type hashGate struct {
	mu       sync.Mutex
	free     int
	queue    int
	wait     time.Duration
	normal   []*waiter
	trusted  []*waiter
	inflight map[string]bool
}

type waiter struct {
	ready   chan struct{}
	granted bool
}

func newHashGate(slots, queue int, wait time.Duration) *hashGate {
	return &hashGate{free: slots, queue: queue, wait: wait, inflight: map[string]bool{}}
}

// acquire waits for a slot for key, or refuses with errBusy. The caller
// runs the hash, then calls release.
func (g *hashGate) acquire(ctx context.Context, key string, trusted bool) (release func(), err error) {
	g.mu.Lock()
	if g.inflight[key] {
		g.mu.Unlock()
		return nil, errBusy
	}
	release = func() { g.release(key) }
	if g.free > 0 && len(g.normal) == 0 && len(g.trusted) == 0 {
		g.free--
		g.inflight[key] = true
		g.mu.Unlock()
		return release, nil
	}
	q := &g.normal
	if trusted {
		q = &g.trusted
	}
	if len(*q) >= g.queue {
		g.mu.Unlock()
		return nil, errBusy
	}
	w := &waiter{ready: make(chan struct{})}
	*q = append(*q, w)
	g.inflight[key] = true
	g.mu.Unlock()

	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case <-w.ready:
		return release, nil
	case <-t.C:
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if w.granted {
		// The slot came as the wait ended: take it rather than lose it.
		return release, nil
	}
	for i, o := range *q {
		if o == w {
			*q = append((*q)[:i], (*q)[i+1:]...)
			break
		}
	}
	delete(g.inflight, key)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, errBusy
}

// release frees key's slot, handing it to the first trusted waiter, else
// the first waiter.
func (g *hashGate) release(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.inflight, key)
	for _, q := range []*[]*waiter{&g.trusted, &g.normal} {
		if len(*q) > 0 {
			w := (*q)[0]
			*q = (*q)[1:]
			w.granted = true
			close(w.ready)
			return
		}
	}
	g.free++
}
