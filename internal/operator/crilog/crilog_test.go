package crilog

import (
	"bytes"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWriter(t *testing.T) {
	t.Parallel()
	ts := time.Date(2026, 11, 29, 19, 30, 1, 123456789, time.FixedZone("x", 3600))
	const prefix = "2026-11-29T18:30:01.123456789Z stdout "
	long := strings.Repeat("a", maxLine+5)
	tests := []struct {
		name   string
		writes []string
		flush  bool
		want   []string
	}{
		{name: "one line", writes: []string{"hello\n"}, want: []string{"F hello"}},
		{name: "two lines in one write", writes: []string{"a\nb\n"}, want: []string{"F a", "F b"}},
		{name: "line split across writes", writes: []string{"hel", "lo\nwor", "ld\n"}, want: []string{"F hello", "F world"}},
		{name: "pending text waits for its newline", writes: []string{"no newline"}, want: nil},
		{name: "flush writes pending text", writes: []string{"no newline"}, flush: true, want: []string{"F no newline"}},
		{name: "empty line", writes: []string{"\n"}, want: []string{"F "}},
		{name: "carriage return dropped", writes: []string{"dos\r\n"}, want: []string{"F dos"}},
		{name: "long line split into partials", writes: []string{long + "\n"}, want: []string{"P " + long[:maxLine], "F aaaaa"}},
		{name: "line of the limit is full", writes: []string{long[:maxLine] + "\nb\n"}, want: []string{"F " + long[:maxLine], "F b"}},
		{name: "long pending text written as partial", writes: []string{long}, want: []string{"P " + long[:maxLine]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			w := NewWriter(&out, "stdout")
			w.now = func() time.Time { return ts }
			for _, s := range tt.writes {
				n, err := w.Write([]byte(s))
				if err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v, want %d, nil", s, n, err, len(s))
				}
			}
			if tt.flush {
				if err := w.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			var want string
			for _, l := range tt.want {
				want += prefix + l + "\n"
			}
			if got := out.String(); got != want {
				t.Errorf("got %q, want %q", abbrev(got), abbrev(want))
			}
		})
	}
}

// TestWriterConcurrent checks that lines written from many goroutines are
// never interleaved.
func TestWriterConcurrent(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := NewWriter(&out, "stderr")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for range 100 {
				w.Write([]byte(strings.Repeat(string(rune('a'+g)), 50) + "\n"))
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("got %d lines, want 800", len(lines))
	}
	for _, l := range lines {
		f := strings.SplitN(l, " ", 4)
		if len(f) != 4 || f[1] != "stderr" || f[2] != "F" || len(f[3]) != 50 || strings.Count(f[3], f[3][:1]) != 50 {
			t.Fatalf("malformed line %q", l)
		}
		if _, err := time.Parse(time.RFC3339Nano, f[0]); err != nil {
			t.Fatalf("timestamp of %q: %v", l, err)
		}
	}
}

func abbrev(s string) string {
	if len(s) > 200 {
		return s[:100] + "..." + s[len(s)-100:]
	}
	return s
}

// TestWritersTimesGrowInFileOrder: a program's stdout and stderr, written
// into one log, come out with times that never go back, so a line's time is
// its place in the log. The interleaving that would break it is made, not
// waited for: stdout takes its time, and before it writes its line stderr
// tries to take a later time and write first. Under one lock stderr waits
// until stdout's line is out; with a lock each, stderr's later line lands
// first — every time, not only when a race goes that way.
func TestWritersTimesGrowInFileOrder(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	stdout, stderr := NewWriters(&out)
	var (
		mu    sync.Mutex
		clock = time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	)
	tick := func() time.Time { // every stamp later than the one before
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Millisecond)
		return clock
	}
	stderr.now = tick
	stderrDone := make(chan struct{})
	stdout.now = func() time.Time {
		stamp := tick()
		go func() {
			defer close(stderrDone)
			stderr.Write([]byte("second\n"))
		}()
		// Until stderr has written, or is held at the writers' lock.
		waitWrittenOrBlocked(t, stderrDone)
		return stamp
	}
	stdout.Write([]byte("first\n"))
	<-stderrDone

	var last time.Time
	streams := map[string]int{}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		ts, err := time.Parse(time.RFC3339Nano, f[0])
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if ts.Before(last) {
			t.Fatalf("line %d %q (%s) is older than the line before it (%s): the writers stamp and write under locks of their own", i, l, ts.Format(time.RFC3339Nano), last.Format(time.RFC3339Nano))
		}
		last = ts
		streams[f[1]]++
	}
	if streams["stdout"] != 1 || streams["stderr"] != 1 {
		t.Errorf("lines by stream: got %v, want one each", streams)
	}
}

// waitWrittenOrBlocked returns once done is closed, or once the goroutine
// this test started is parked in a Writer's Write, waiting for a mutex (the
// runtime's goroutine dump names the wait and who started it; other
// tests' writers, running in parallel, are not it): either way the other
// writer has gone as far as it can while the caller holds its lock.
func waitWrittenOrBlocked(t *testing.T, done <-chan struct{}) {
	deadline := time.Now().Add(time.Minute) // only if the runtime changes its dumps
	buf := make([]byte, 1<<20)
	for {
		select {
		case <-done:
			return
		default:
		}
		dump := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(dump, "\n\n") {
			if strings.Contains(g, "[sync.Mutex.Lock") && strings.Contains(g, "crilog.(*Writer).Write(") &&
				strings.Contains(g, "created by oplab.dev/oplab/internal/operator/crilog.TestWritersTimesGrowInFileOrder.") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second writer neither wrote nor waited at a lock in a minute:\n%s", dump)
		}
		time.Sleep(time.Millisecond)
	}
}
