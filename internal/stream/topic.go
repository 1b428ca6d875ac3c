package stream

import (
	"context"
	"encoding/json"
	"sync"

	"oplab.dev/oplab/internal/frame"
)

// topic is one key's running upstream, its ring and its subscribers.
type topic struct {
	h      *Hub
	key    string
	epoch  string
	maxLag uint64
	cancel context.CancelFunc
	done   chan struct{} // closed when the upstream has returned

	mu   sync.Mutex
	ring []frame.Frame // ring[seq % len(ring)] holds frame seq, for seqs oldest..last
	// oldest is the oldest seq kept (1 before the first frame is
	// dropped); bytes the size of the frames kept, at most maxBytes but
	// for the newest frame.
	oldest   uint64
	bytes    int
	maxBytes int
	last     uint64 // newest seq; 0 before the first frame
	wake     chan struct{}
	subs     map[*Subscription]struct{}
	leaves   uint64 // how many times the last subscriber left
	ended    bool
	err      error // the upstream's error, or ErrEnded / ErrClosed
}

func newTopic(h *Hub, key string, o Options, cancel context.CancelFunc) *topic {
	return &topic{
		h: h, key: key, epoch: newEpoch(), maxLag: uint64(o.MaxLag), cancel: cancel,
		done: make(chan struct{}), ring: make([]frame.Frame, o.Ring), oldest: 1, maxBytes: o.RingBytes, wake: make(chan struct{}),
		subs: map[*Subscription]struct{}{},
	}
}

// first is the oldest seq still in the ring.
func (t *topic) first() uint64 { return t.oldest }

// keep puts f, the newest frame, in the ring, and drops the oldest frames
// while the ring holds more than its frames or its bytes; t.mu is held.
func (t *topic) keep(f frame.Frame) {
	n := uint64(len(t.ring))
	if f.Seq-t.oldest >= n {
		t.dropOldest() // f's place holds the oldest frame
	}
	t.ring[f.Seq%n] = f
	t.bytes += size(f)
	for t.bytes > t.maxBytes && t.oldest < f.Seq {
		t.dropOldest()
	}
}

// size is the bytes a frame kept in a ring holds: its data, its cursor
// and its encoding (made once, when it was published).
func size(f frame.Frame) int {
	enc, _ := f.MarshalJSON()
	return len(f.Data) + len(f.Cursor) + len(enc)
}

// dropOldest lets go of the oldest frame in the ring; t.mu is held.
func (t *topic) dropOldest() {
	i := t.oldest % uint64(len(t.ring))
	t.bytes -= size(t.ring[i])
	t.ring[i] = frame.Frame{}
	t.oldest++
}

// publish numbers data, keeps it in the ring and wakes the subscribers;
// it never waits for one. Subscribers left too far behind are dropped.
func (t *topic) publish(data []byte, cursor string) {
	if !json.Valid(data) {
		data, _ = json.Marshal(string(data)) // a client never gets a broken frame
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	t.last++
	t.keep(frame.Data(t.last, cursor, data))
	close(t.wake)
	t.wake = make(chan struct{})
	for s := range t.subs {
		if t.last-max(s.next-1, s.joined) > t.maxLag {
			t.drop(s, ErrSlow)
		}
	}
}

// join adds a subscriber that starts after from.
func (t *topic) join(from From) *Subscription {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &Subscription{t: t, joined: t.last, done: make(chan struct{}), hello: true}
	switch {
	case t.ended:
		t.drop(s, t.err)
		return s
	case from.Epoch == t.epoch && from.Seq > 0 && from.Seq <= t.last:
		s.next = from.Seq + 1
	case from.Newest:
		s.next = max(t.last, 1)
	case from.Cursor != "":
		// From the upstream's first frame: when some fell out of the ring
		// after the cursor, a gap says so (see TryNext).
		s.next, s.after, s.resumed = 1, from.Cursor, true
	default:
		s.next = t.first()
	}
	t.subs[s] = struct{}{}
	return s
}

// leave removes s.
func (t *topic) leave(s *Subscription) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.drop(s, ErrClosed)
}

// drop ends s with err; t.mu is held. The last subscriber to go, closed or
// dropped, starts the grace period.
func (t *topic) drop(s *Subscription, err error) {
	if _, ok := t.subs[s]; ok {
		delete(t.subs, s)
		if len(t.subs) == 0 && !t.ended {
			t.leaves++
			t.h.left(t, t.leaves)
		}
	}
	if s.err == nil {
		s.err = err
		close(s.done)
	}
}

func (t *topic) idleSince(leave uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.subs) == 0 && t.leaves == leave
}

func (t *topic) watched() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.subs) > 0
}

func (t *topic) isEnded() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ended
}

// stop cancels the upstream; end follows when it has returned.
func (t *topic) stop() { t.cancel() }

// end records that the upstream returned with err (stopped: because it was
// cancelled) and ends the subscriptions once they have read what is left.
func (t *topic) end(err error, stopped bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case stopped:
		err = ErrClosed
	case err == nil:
		err = ErrEnded
	}
	t.ended, t.err = true, err
	close(t.wake)
	close(t.done)
}
