package stream

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Upstream produces a stream's messages: it calls emit with each until ctx
// ends, then returns. It may return earlier with an error, which ends its
// subscriptions.
type Upstream interface {
	Run(ctx context.Context, emit Emit) error
}

// Emit publishes one message of an upstream. data is JSON, kept by the hub:
// not to be changed afterwards. cursor is the message's place in what the
// upstream reads, the same in every process that reads it and growing in
// string order (a log line's time, written at a fixed width), or "" when
// the message has none: a client that comes back to another server, whose
// frame numbers are not the ones it saw, resumes after its last cursor.
// An alias, so that a source's Run needs no import of this package.
type Emit = func(data []byte, cursor string)

// UpstreamFunc is a function that is an Upstream.
type UpstreamFunc func(ctx context.Context, emit Emit) error

// Run implements Upstream.
func (f UpstreamFunc) Run(ctx context.Context, emit Emit) error { return f(ctx, emit) }

// Opener returns the upstream of key, or an error when there is none (the
// error is Subscribe's). It is called when key has no running upstream.
type Opener func(key string) (Upstream, error)

// Options tune a Hub; zero fields take the defaults.
type Options struct {
	// Ring is how many frames each key keeps for subscribers that join or
	// come back (1024).
	Ring int
	// RingBytes bounds the bytes of the frames each key keeps
	// (DefaultRingBytes): beyond it the oldest go, as they do beyond Ring,
	// and a subscriber that had not read them gets a gap. The newest frame
	// is always kept, whatever its size.
	RingBytes int
	// MaxLag is how many frames, published since it joined, a subscriber
	// may leave unread before it is dropped (256).
	MaxLag int
	// Grace is how long an upstream runs on after its last subscriber
	// leaves, so that a reload of the page finds it running (10 s).
	Grace time.Duration
	// Logger receives upstreams' ends; discarded when nil.
	Logger *slog.Logger
}

// DefaultRingBytes is a key's RingBytes when Options leave it zero: a
// thousand lines of a log, or a score of a cluster view's snapshots,
// whatever a learner makes them.
const DefaultRingBytes = 2 << 20

// Errors a subscription ends with.
var (
	// ErrSlow: the subscriber fell more than MaxLag frames behind.
	ErrSlow = errors.New("subscriber too slow: dropped")
	// ErrClosed: the subscription or the hub was closed.
	ErrClosed = errors.New("subscription closed")
	// ErrEnded: the upstream ended without an error.
	ErrEnded = errors.New("stream ended")
)

// Hub runs one upstream per key and fans its frames out to the key's
// subscribers. Its methods are safe for concurrent use.
type Hub struct {
	open   Opener
	opts   Options
	log    *slog.Logger
	ctx    context.Context // parent of every upstream; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // upstreams and grace timers' work

	mu     sync.Mutex
	topics map[string]*topic
	closed bool
}

// New returns a Hub whose upstreams open returns. Close stops them.
func New(open Opener, opts Options) *Hub {
	if opts.Ring <= 0 {
		opts.Ring = 1024
	}
	if opts.RingBytes <= 0 {
		opts.RingBytes = DefaultRingBytes
	}
	if opts.MaxLag <= 0 {
		opts.MaxLag = 256
	}
	if opts.Grace <= 0 {
		opts.Grace = 10 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The hub owns its upstreams' lifetimes: they outlive any one request
	// and end with Close.
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{open: open, opts: opts, log: log, ctx: ctx, cancel: cancel, topics: map[string]*topic{}}
}

// Close stops every upstream, ends every subscription with ErrClosed and
// waits for the upstreams to return.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	for _, t := range h.topics {
		t.stop()
	}
	h.mu.Unlock()
	h.cancel()
	h.wg.Wait()
}

// From says where a subscription starts.
type From struct {
	// Epoch and Seq are those of the last frame the client saw (from a
	// hello or data frame); Seq 0, or an epoch that is not the running
	// upstream's, starts from the oldest frame in the ring.
	Epoch string
	Seq   uint64
	// Cursor is the last cursor the client saw. When Epoch is not the
	// running upstream's (the client comes from another server, or from
	// before this upstream started), the subscription starts after it:
	// data frames up to it, and those without a cursor before the first
	// one past it, are left out, and the hello says Resumed. Frames that
	// fell out of the ring after it make a gap, whose Skipped then counts
	// every frame gone from the ring, seen or not.
	Cursor string
	// Newest starts from the newest frame alone when the client does not
	// resume this upstream's frames: for streams of whole snapshots, where
	// only the last one matters.
	Newest bool
}

// Subscribe joins key's stream, starting its upstream if it is not
// running. The subscription's first frame is a hello; then come the frames
// after from, then live ones. Close the subscription when done.
func (h *Hub) Subscribe(key string, from From) (*Subscription, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	t := h.topics[key]
	if t == nil || t.isEnded() {
		up, err := h.open(key)
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", key, err)
		}
		t = h.start(key, up, t)
	}
	return t.join(from), nil
}

// Watched reports whether key's stream has a subscriber now: someone
// watches what it carries.
func (h *Hub) Watched(key string) bool {
	h.mu.Lock()
	t := h.topics[key]
	h.mu.Unlock()
	return t != nil && t.watched()
}

// start runs up as key's topic; prev is the topic it replaces, whose
// upstream is waited for first so that two never run for one key.
func (h *Hub) start(key string, up Upstream, prev *topic) *topic {
	ctx, cancel := context.WithCancel(h.ctx)
	t := newTopic(h, key, h.opts, cancel)
	h.topics[key] = t
	h.wg.Go(func() {
		if prev != nil {
			<-prev.done
		}
		err := up.Run(ctx, t.publish)
		stopped := ctx.Err() != nil // asked to stop, rather than failed or done
		cancel()
		if err != nil && !stopped {
			h.log.Warn("stream upstream failed", "key", key, "err", err)
		}
		h.mu.Lock()
		if h.topics[key] == t {
			delete(h.topics, key)
		}
		h.mu.Unlock()
		t.end(err, stopped)
	})
	return t
}

// left is called when t has no subscriber left: its upstream is stopped
// after the grace period unless someone joins again.
func (h *Hub) left(t *topic, leave uint64) {
	time.AfterFunc(h.opts.Grace, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		// Only the timer of the last leave acts: a subscriber that came and
		// went again in between restarted the grace period.
		if t.idleSince(leave) && h.topics[t.key] == t {
			delete(h.topics, t.key)
			t.stop()
		}
	})
}

func newEpoch() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
