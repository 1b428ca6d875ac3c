package stream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"oplab.dev/oplab/internal/frame"
)

// source is an upstream driven by the test: send publishes, fail ends it
// with an error; it counts its starts and stops.
type source struct {
	mu      sync.Mutex
	emit    Emit
	starts  int
	stops   int
	started chan struct{}
	stopped chan struct{}
	fail    chan error
}

func newSource() *source {
	return &source{started: make(chan struct{}, 16), stopped: make(chan struct{}, 16), fail: make(chan error, 1)}
}

func (s *source) Run(ctx context.Context, emit Emit) error {
	s.mu.Lock()
	s.starts++
	s.emit = emit
	s.mu.Unlock()
	s.started <- struct{}{}
	defer func() {
		s.mu.Lock()
		s.stops++
		s.emit = nil
		s.mu.Unlock()
		s.stopped <- struct{}{}
	}()
	select {
	case <-ctx.Done():
		return nil
	case err := <-s.fail:
		return err
	}
}

func (s *source) counts() (starts, stops int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts, s.stops
}

// send publishes the numbers from..to as JSON, each with its number as
// its cursor (at a fixed width, as cursors sort).
func (s *source) send(t *testing.T, from, to int) {
	t.Helper()
	s.mu.Lock()
	emit := s.emit
	s.mu.Unlock()
	if emit == nil {
		t.Fatal("send: the upstream is not running")
	}
	for i := from; i <= to; i++ {
		emit([]byte(strconv.Itoa(i)), cursor(i))
	}
}

func newHub(t *testing.T, src *source, o Options) *Hub {
	t.Helper()
	h := New(func(key string) (Upstream, error) {
		if key != "k" {
			return nil, fmt.Errorf("no stream %q", key)
		}
		return src, nil
	}, o)
	t.Cleanup(h.Close)
	return h
}

func subscribe(t *testing.T, h *Hub, from From) *Subscription {
	t.Helper()
	s, err := h.Subscribe("k", from)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// next reads a frame, failing the test after 5 s.
func next(t *testing.T, s *Subscription) frame.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	f, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("next frame: %v", err)
	}
	return f
}

// expectData reads data frames from..to in order.
func expectData(t *testing.T, s *Subscription, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		f := next(t, s)
		if f.Type != frame.TypeData || f.Seq != uint64(i) || string(f.Data) != strconv.Itoa(i) {
			t.Fatalf("got frame %+v, want data %d with seq %d", f, i, i)
		}
	}
}

func expectHello(t *testing.T, s *Subscription) frame.Frame {
	t.Helper()
	f := next(t, s)
	if f.Type != frame.TypeHello || f.Epoch != s.Epoch() || f.Epoch == "" {
		t.Fatalf("got first frame %+v, want a hello with epoch %q", f, s.Epoch())
	}
	return f
}

func TestFanOut(t *testing.T) {
	t.Parallel()
	src := newSource()
	h := newHub(t, src, Options{})
	const subscribers, frames = 50, 200
	subs := make([]*Subscription, subscribers)
	for i := range subs {
		subs[i] = subscribe(t, h, From{})
	}
	waitFor(t, src.started, "the upstream")
	errs := make(chan error, subscribers)
	var wg sync.WaitGroup
	for _, s := range subs {
		wg.Go(func() {
			defer s.Close()
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if f, err := s.Next(ctx); err != nil || f.Type != frame.TypeHello {
				errs <- fmt.Errorf("first frame %+v, %v; want hello", f, err)
				return
			}
			for i := 1; i <= frames; i++ {
				f, err := s.Next(ctx)
				if err != nil || f.Seq != uint64(i) || string(f.Data) != strconv.Itoa(i) {
					errs <- fmt.Errorf("frame %d: got %+v, %v", i, f, err)
					return
				}
			}
		})
	}
	src.send(t, 1, frames)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if starts, _ := src.counts(); starts != 1 {
		t.Errorf("upstream started %d times for %d subscribers, want once", starts, subscribers)
	}
}

func TestSlowSubscriberDropped(t *testing.T) {
	t.Parallel()
	src := newSource()
	h := newHub(t, src, Options{Ring: 64, MaxLag: 8})
	slow := subscribe(t, h, From{})
	defer slow.Close()
	fast := subscribe(t, h, From{})
	defer fast.Close()
	waitFor(t, src.started, "the upstream")
	expectHello(t, fast)
	// The fast one reads each frame as it comes; the slow one reads none.
	// send never waits for a subscriber, or this would hang on slow.
	for i := 1; i <= 100; i++ {
		src.send(t, i, i)
		expectData(t, fast, i, i)
	}
	waitFor(t, slow.Done(), "the slow subscriber's drop")
	if err := slow.Err(); !errors.Is(err, ErrSlow) {
		t.Errorf("slow subscriber ended with %v, want ErrSlow", err)
	}
	if _, err := slow.Next(t.Context()); !errors.Is(err, ErrSlow) {
		t.Errorf("Next of the dropped subscriber: got %v, want ErrSlow", err)
	}
	if fast.Err() != nil {
		t.Errorf("fast subscriber ended with %v", fast.Err())
	}
}

// TestSlowLastSubscriberStopsUpstream: a dropped subscriber leaves as a
// closed one does, so the upstream stops after the grace period.
func TestSlowLastSubscriberStopsUpstream(t *testing.T) {
	t.Parallel()
	src := newSource()
	h := newHub(t, src, Options{MaxLag: 4, Grace: 50 * time.Millisecond})
	slow := subscribe(t, h, From{})
	waitFor(t, src.started, "the upstream")
	src.send(t, 1, 10)
	waitFor(t, slow.Done(), "the slow subscriber's drop")
	waitFor(t, src.stopped, "the upstream to stop after its only subscriber was dropped")
	slow.Close() // after the drop: nothing more to do
}

// TestResume reconnects from the last frame seen: nothing twice, nothing
// lost while the frames are in the ring; too far back, a gap frame.
func TestResume(t *testing.T) {
	t.Parallel()
	src := newSource()
	h := newHub(t, src, Options{Ring: 8})
	keep := subscribe(t, h, From{}) // keeps the upstream running between connections
	defer keep.Close()
	waitFor(t, src.started, "the upstream")

	a := subscribe(t, h, From{})
	hello := expectHello(t, a)
	src.send(t, 1, 5)
	expectData(t, a, 1, 5)
	a.Close()
	src.send(t, 6, 9) // while away

	b := subscribe(t, h, From{Epoch: hello.Epoch, Seq: 5})
	if f := expectHello(t, b); f.Seq != 9 {
		t.Errorf("hello after resume: got seq %d, want the newest, 9", f.Seq)
	}
	expectData(t, b, 6, 9)
	src.send(t, 10, 10)
	expectData(t, b, 10, 10)
	b.Close()

	src.send(t, 11, 20) // the ring keeps 13..20
	c := subscribe(t, h, From{Epoch: hello.Epoch, Seq: 10})
	expectHello(t, c)
	if f := next(t, c); f.Type != frame.TypeGap || f.Seq != 12 || f.Skipped != 2 {
		t.Errorf("got %+v, want a gap of 2 frames up to seq 12", f)
	}
	expectData(t, c, 13, 20)
	c.Close()

	// Another upstream's numbers mean nothing here: from the ring's start.
	d := subscribe(t, h, From{Epoch: "other", Seq: 15})
	expectHello(t, d)
	expectData(t, d, 13, 20)
	d.Close()

	e := subscribe(t, h, From{Newest: true})
	expectHello(t, e)
	expectData(t, e, 20, 20)
	e.Close()
}

func TestUpstreamLifecycle(t *testing.T) {
	t.Parallel()
	src := newSource()
	h := newHub(t, src, Options{Grace: 100 * time.Millisecond})
	var subs []*Subscription
	for range 10 {
		subs = append(subs, subscribe(t, h, From{}))
	}
	waitFor(t, src.started, "the upstream")
	for _, s := range subs[1:] {
		s.Close()
	}
	time.Sleep(300 * time.Millisecond) // past the grace period
	if starts, stops := src.counts(); starts != 1 || stops != 0 {
		t.Errorf("with a subscriber left: %d starts, %d stops; want 1, 0", starts, stops)
	}
	if !h.Watched("k") || h.Watched("other") {
		t.Errorf("with a subscriber left: watched %v, another key %v; want true, false", h.Watched("k"), h.Watched("other"))
	}
	subs[0].Close()
	if h.Watched("k") {
		t.Error("with no subscriber left (the upstream in its grace period): watched, want not")
	}
	// Back within the grace period: the same upstream goes on.
	again := subscribe(t, h, From{})
	time.Sleep(300 * time.Millisecond)
	if starts, stops := src.counts(); starts != 1 || stops != 0 {
		t.Errorf("rejoined within the grace period: %d starts, %d stops; want 1, 0", starts, stops)
	}
	epoch := again.Epoch()
	again.Close()
	waitFor(t, src.stopped, "the upstream to stop after the last subscriber left")

	// A new subscriber starts a new upstream, with a new epoch.
	late := subscribe(t, h, From{})
	defer late.Close()
	waitFor(t, src.started, "the second upstream")
	if starts, stops := src.counts(); starts != 2 || stops != 1 {
		t.Errorf("after a new subscriber: %d starts, %d stops; want 2, 1", starts, stops)
	}
	if late.Epoch() == epoch {
		t.Errorf("the new upstream has the old epoch %q", epoch)
	}
}

func TestUpstreamEnds(t *testing.T) {
	t.Parallel()
	src := newSource()
	h := newHub(t, src, Options{})
	s := subscribe(t, h, From{})
	defer s.Close()
	waitFor(t, src.started, "the upstream")
	src.send(t, 1, 3)
	failure := errors.New("cluster gone")
	src.fail <- failure
	waitFor(t, src.stopped, "the upstream's end")
	// What was published before the end is still handed out.
	expectHello(t, s)
	expectData(t, s, 1, 3)
	if _, err := s.Next(t.Context()); !errors.Is(err, failure) {
		t.Errorf("after the upstream failed: got %v, want its error", err)
	}
	if _, err := h.Subscribe("nope", From{}); err == nil {
		t.Error("subscribing to a key without an upstream: got no error")
	}
}

func TestHubClose(t *testing.T) {
	t.Parallel()
	src := newSource()
	h := New(func(string) (Upstream, error) { return src, nil }, Options{})
	s, err := h.Subscribe("k", From{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, src.started, "the upstream")
	h.Close() // waits for the upstream
	if starts, stops := src.counts(); starts != 1 || stops != 1 {
		t.Errorf("after Close: %d starts, %d stops; want 1, 1", starts, stops)
	}
	expectHello(t, s)
	if _, err := s.Next(t.Context()); !errors.Is(err, ErrClosed) {
		t.Errorf("subscription after Close: got %v, want ErrClosed", err)
	}
	if _, err := h.Subscribe("k", From{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Subscribe after Close: got %v, want ErrClosed", err)
	}
}

// cursor is the test source's cursor of message i.
func cursor(i int) string { return fmt.Sprintf("%08d", i) }

// expectValues reads data frames carrying the messages from..to, whatever
// their numbers.
func expectValues(t *testing.T, s *Subscription, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		if f := next(t, s); f.Type != frame.TypeData || string(f.Data) != strconv.Itoa(i) || f.Cursor != cursor(i) {
			t.Fatalf("got frame %+v, want message %d with its cursor", f, i)
		}
	}
}

// TestResumeOnAnotherHub: a client whose server died comes back to another
// server, whose upstream read the same source from its start and numbered
// it its own way. With its last cursor it resumes after what it saw: the
// hello says so, and nothing it saw comes again; without one it starts
// over. Frames after the cursor that fell out of the ring make a gap;
// frames before it do not.
func TestResumeOnAnotherHub(t *testing.T) {
	t.Parallel()
	srcA := newSource()
	a := subscribe(t, newHub(t, srcA, Options{}), From{})
	helloA := expectHello(t, a)
	waitFor(t, srcA.started, "the first server's upstream")
	srcA.send(t, 1, 5)
	expectValues(t, a, 1, 5)
	a.Close() // the first server dies

	srcB := newSource()
	hubB := newHub(t, srcB, Options{Ring: 16})
	keep := subscribe(t, hubB, From{})
	defer keep.Close()
	waitFor(t, srcB.started, "the second server's upstream")
	srcB.mu.Lock()
	srcB.emit([]byte(`"a line without a time"`), "")
	srcB.mu.Unlock()
	srcB.send(t, 1, 8)

	b := subscribe(t, hubB, From{Epoch: helloA.Epoch, Seq: 5, Cursor: cursor(5)})
	if h := expectHello(t, b); !h.Resumed || h.Epoch == helloA.Epoch {
		t.Errorf("hello on the other server: got %+v, want its own epoch and resumed", h)
	}
	expectValues(t, b, 6, 8)
	srcB.send(t, 9, 9)
	expectValues(t, b, 9, 9)
	b.Close()

	again := subscribe(t, hubB, From{Epoch: helloA.Epoch, Seq: 5})
	if h := expectHello(t, again); h.Resumed {
		t.Errorf("hello without a cursor: got %+v, want not resumed", h)
	}
	if f := next(t, again); f.Cursor != "" {
		t.Errorf("without a cursor: got %+v first, want the stream from its start", f)
	}
	expectValues(t, again, 1, 9)
	again.Close()

	// A small ring: 7..10 are kept.
	srcC := newSource()
	hubC := newHub(t, srcC, Options{Ring: 4})
	keepC := subscribe(t, hubC, From{})
	defer keepC.Close()
	waitFor(t, srcC.started, "the third server's upstream")
	srcC.send(t, 1, 10)
	seen := subscribe(t, hubC, From{Epoch: helloA.Epoch, Cursor: cursor(7)})
	expectHello(t, seen)
	expectValues(t, seen, 8, 10) // no gap: what fell out came before 7
	seen.Close()
	lost := subscribe(t, hubC, From{Epoch: helloA.Epoch, Cursor: cursor(5)})
	expectHello(t, lost)
	if f := next(t, lost); f.Type != frame.TypeGap || f.Seq != 6 {
		t.Errorf("after a cursor older than the ring: got %+v, want a gap up to seq 6", f)
	}
	expectValues(t, lost, 7, 10)
	lost.Close()
}

// TestRingBytes: a key's ring keeps at most RingBytes of frames, however
// few frames that is, and the newest frame whatever its size; a
// subscriber that had not read the frames let go gets a gap that counts
// them, then what is kept.
func TestRingBytes(t *testing.T) {
	t.Parallel()
	src := newSource()
	const ringBytes = 16 << 10
	h := newHub(t, src, Options{Ring: 1024, RingBytes: ringBytes, MaxLag: 1000})
	behind := subscribe(t, h, From{})
	defer behind.Close()
	waitFor(t, src.started, "the upstream")
	expectHello(t, behind)

	emit := func(seq int, n int) {
		src.mu.Lock()
		e := src.emit
		src.mu.Unlock()
		e([]byte(fmt.Sprintf(`"%05d %s"`, seq, strings.Repeat("x", n))), cursor(seq))
	}
	for i := 1; i <= 100; i++ {
		emit(i, 1<<10)
	}
	h.mu.Lock()
	top := h.topics["k"]
	h.mu.Unlock()
	kept := func() (frames, bytes int) {
		top.mu.Lock()
		defer top.mu.Unlock()
		for seq := top.oldest; seq <= top.last; seq++ {
			f := top.ring[seq%uint64(len(top.ring))]
			if f.Seq != seq {
				t.Fatalf("ring slot of seq %d holds seq %d", seq, f.Seq)
			}
			frames, bytes = frames+1, bytes+size(f)
		}
		if bytes != top.bytes {
			t.Fatalf("the ring counts %d bytes, its frames hold %d", top.bytes, bytes)
		}
		return frames, bytes
	}
	frames, bytes := kept()
	if bytes > ringBytes || frames < 2 || frames >= 100 {
		t.Errorf("after 100 frames of 1 KiB: the ring keeps %d frames, %d bytes; want at most %d bytes, some frames", frames, bytes, ringBytes)
	}
	if f := next(t, behind); f.Type != frame.TypeGap || f.Seq != uint64(100-frames) || f.Skipped != uint64(100-frames) {
		t.Errorf("the subscriber behind: got %s frame %d (skipped %d), want a gap of %d frames", f.Type, f.Seq, f.Skipped, 100-frames)
	}
	for seq := 100 - frames + 1; seq <= 100; seq++ {
		if f := next(t, behind); f.Type != frame.TypeData || f.Seq != uint64(seq) {
			t.Fatalf("got %s frame %d, want data frame %d", f.Type, f.Seq, seq)
		}
	}

	emit(101, 2*ringBytes) // one frame over the bound by itself
	if frames, bytes := kept(); frames != 1 || bytes <= ringBytes {
		t.Errorf("after a frame larger than the bound: the ring keeps %d frames of %d bytes, want that one", frames, bytes)
	}
	if f := next(t, behind); f.Type != frame.TypeData || f.Seq != 101 {
		t.Errorf("got %s frame %d, want the large frame, 101", f.Type, f.Seq)
	}
	late := subscribe(t, h, From{})
	defer late.Close()
	expectHello(t, late)
	if f := next(t, late); f.Type != frame.TypeData || f.Seq != 101 {
		t.Errorf("a subscriber that joins: got %s frame %d, want the large frame, the one kept", f.Type, f.Seq)
	}
}
