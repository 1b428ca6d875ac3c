package crilog

import (
	"bytes"
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
// at once from many goroutines into one log, come out with times that never
// go back, so a line's time is its place in the log.
func TestWritersTimesGrowInFileOrder(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	stdout, stderr := NewWriters(&out)
	var wg sync.WaitGroup
	for g := range 8 {
		w := stdout
		if g%2 == 1 {
			w = stderr
		}
		wg.Go(func() {
			for range 300 {
				w.Write([]byte("line\n"))
			}
		})
	}
	wg.Wait()
	var last time.Time
	var streams = map[string]int{}
	for i, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		f := strings.Fields(l)
		ts, err := time.Parse(time.RFC3339Nano, f[0])
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if ts.Before(last) {
			t.Fatalf("line %d (%s) is older than the line before it (%s)", i, ts.Format(time.RFC3339Nano), last.Format(time.RFC3339Nano))
		}
		last = ts
		streams[f[1]]++
	}
	if streams["stdout"] != 1200 || streams["stderr"] != 1200 {
		t.Errorf("lines by stream: %v, want 1200 each", streams)
	}
}
