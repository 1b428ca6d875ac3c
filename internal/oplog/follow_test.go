package oplog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func cri(text string) string { return "2026-01-02T03:04:05.000000006Z stderr F " + text + "\n" }

// collector gathers a follower's lines for a test.
type collector struct {
	mu    sync.Mutex
	lines []string
	more  chan struct{}
}

func newCollector() *collector { return &collector{more: make(chan struct{}, 1)} }

func (c *collector) emit(l Line) error {
	c.mu.Lock()
	c.lines = append(c.lines, l.Text)
	c.mu.Unlock()
	select {
	case c.more <- struct{}{}:
	default:
	}
	return nil
}

func (c *collector) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

// waitLen waits until n lines came, failing the test after 5 s.
func (c *collector) waitLen(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for len(c.got()) < n {
		select {
		case <-c.more:
		case <-deadline:
			t.Fatalf("got %q, want %d lines", c.got(), n)
		}
	}
}

// TestFollower follows a log as hostpod writes it: a directory and file
// that do not exist yet, lines in pieces, a restart of the operator that
// moves the file aside and starts a new one, and a truncation. Nothing is
// lost and nothing comes twice.
func TestFollower(t *testing.T) {
	for _, tt := range []struct {
		name string
		poll time.Duration
	}{
		{"notified", time.Hour}, // fsnotify alone: the poll never fires
		{"polling", 20 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			loc := Location{Dir: filepath.Join(t.TempDir(), "pg-operator")}
			c := newCollector()
			f := &Follower{Path: loc.Log(), Poll: tt.poll}
			if tt.poll == time.Hour {
				// The directory must exist for inotify to watch it from the start.
				if err := os.MkdirAll(loc.Dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- f.Run(ctx, c.emit) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("follower ended with %v", err)
				}
			}()

			if err := os.MkdirAll(loc.Dir, 0o700); err != nil {
				t.Fatal(err)
			}
			// A partial record, then a record whose newline is not written yet.
			appendFile(t, loc.Log(), cri("one")+"2026-01-02T03:04:05Z stderr P tw\n2026-01-02T03:04:05Z stderr F o")
			c.waitLen(t, 1)
			appendFile(t, loc.Log(), "\n"+cri("thr"))
			c.waitLen(t, 3)
			// The operator restarts: hostpod moves its log aside, starts anew.
			appendFile(t, loc.Log(), cri("last of run 1"))
			if err := os.Rename(loc.Log(), loc.Previous()); err != nil {
				t.Fatal(err)
			}
			appendFile(t, loc.Log(), cri("first of run 2"))
			c.waitLen(t, 5)
			// Truncated and written again: read from its start.
			if err := os.Truncate(loc.Log(), 0); err != nil {
				t.Fatal(err)
			}
			appendFile(t, loc.Log(), cri("after")) // shorter than before
			c.waitLen(t, 6)
			want := []string{"one", "two", "thr", "last of run 1", "first of run 2", "after"}
			if got := c.got(); !reflect.DeepEqual(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestFollowerPrevious(t *testing.T) {
	t.Parallel()
	loc := Location{Dir: t.TempDir()}
	appendFile(t, loc.Previous(), cri("from the last run"))
	appendFile(t, loc.Log(), cri("now"))
	c := newCollector()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- (&Follower{Path: loc.Log(), Previous: loc.Previous()}).Run(ctx, c.emit) }()
	c.waitLen(t, 2)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := c.got(), []string{"from the last run", "now"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestFollowerEmitError(t *testing.T) {
	t.Parallel()
	loc := Location{Dir: t.TempDir()}
	appendFile(t, loc.Log(), cri("a")+cri("b"))
	err := (&Follower{Path: loc.Log()}).Run(t.Context(), func(Line) error { return fmt.Errorf("viewer gone") })
	if err == nil || err.Error() != "viewer gone" {
		t.Errorf("got %v, want the emit's error", err)
	}
}

func TestLocation(t *testing.T) {
	t.Parallel()
	l := Beside("/data/clusters/c1/kubeconfig")
	if l.Dir != "/data/clusters/c1/pg-operator" || l.Log() != "/data/clusters/c1/pg-operator/pg-operator.log" ||
		l.Previous() != "/data/clusters/c1/pg-operator/pg-operator.previous.log" {
		t.Errorf("got %+v (%s, %s)", l, l.Log(), l.Previous())
	}
	if got := l.Files(); !reflect.DeepEqual(got, []string{l.Previous(), l.Log()}) {
		t.Errorf("files: got %q, want previous then current", got)
	}
}
