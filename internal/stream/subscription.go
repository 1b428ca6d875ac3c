package stream

import (
	"context"

	"oplab.dev/oplab/internal/frame"
)

// Subscription is one subscriber's place in a key's stream. It is read
// from one goroutine; Close and Done may be used from any.
type Subscription struct {
	t      *topic
	next   uint64 // seq of the next frame to hand out; t.mu guards it and the rest
	joined uint64 // t.last when it joined: replayed frames are not lag
	hello  bool   // the hello frame is still to be handed out
	// after is the client's cursor while data frames up to it are
	// skipped; resumed says so in the hello.
	after   string
	resumed bool
	done    chan struct{}
	err     error
}

// closedChan is always ready.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Epoch identifies the running upstream; frame numbers are its own.
func (s *Subscription) Epoch() string { return s.t.epoch }

// Done is closed when the subscription was dropped or closed; Err says why.
// Frames that the upstream published before it ended are still handed out
// first: an ended upstream ends the subscription through TryNext.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err is why the subscription ended, nil while it runs.
func (s *Subscription) Err() error {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	return s.err
}

// Close leaves the stream; the upstream stops a grace period after its last
// subscriber left.
func (s *Subscription) Close() { s.t.leave(s) }

// Ready returns a channel that is closed when TryNext may have a frame or
// an error.
func (s *Subscription) Ready() <-chan struct{} {
	t := s.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.err != nil || s.hello || s.next <= t.last || t.ended {
		return closedChan
	}
	return t.wake
}

// TryNext returns the next frame if there is one now (ok), or the error
// the subscription ended with.
func (s *Subscription) TryNext() (f frame.Frame, ok bool, err error) {
	t := s.t
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case s.err != nil:
		return frame.Frame{}, false, s.err
	case s.hello:
		s.hello = false
		return frame.Frame{Type: frame.TypeHello, Epoch: t.epoch, Seq: t.last, Resumed: s.resumed}, true, nil
	}
	for s.next <= t.last {
		if first := t.first(); s.next < first {
			lost := first - s.next
			s.next = first
			if c := t.ring[first%uint64(len(t.ring))].Cursor; s.after != "" && (c == "" || c <= s.after) {
				continue // cursors grow: what fell out of the ring was seen
			}
			return frame.Frame{Type: frame.TypeGap, Seq: first - 1, Skipped: lost}, true, nil
		}
		f = t.ring[s.next%uint64(len(t.ring))]
		s.next++
		if s.after != "" {
			if f.Cursor == "" || f.Cursor <= s.after {
				continue // the client saw it from another upstream
			}
			s.after = ""
		}
		return f, true, nil
	}
	if t.ended {
		t.drop(s, t.err)
		return frame.Frame{}, false, s.err
	}
	return frame.Frame{}, false, nil
}

// Next waits for the next frame.
func (s *Subscription) Next(ctx context.Context) (frame.Frame, error) {
	for {
		ready := s.Ready()
		if f, ok, err := s.TryNext(); ok || err != nil {
			return f, err
		}
		select {
		case <-ctx.Done():
			return frame.Frame{}, ctx.Err()
		case <-ready:
		case <-s.done:
		}
	}
}
