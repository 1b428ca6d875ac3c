package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/oplog"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// criLog writes lines "line <from>".."line <to-1>" in the CRI format to
// path, a second apart from t0.
func criLog(t *testing.T, path string, t0 time.Time, from, to int) {
	t.Helper()
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "%s stdout F level=INFO msg=\"line %d\"\n", t0.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), i)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestReadEntries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	prev, cur := filepath.Join(dir, "prev.log"), filepath.Join(dir, "cur.log")
	criLog(t, prev, t0, 0, 25)
	criLog(t, cur, t0, 25, 35)
	tests := []struct {
		name        string
		files       []string
		max         int
		wantN       int
		wantDropped int
		wantFirst   string
	}{
		{"both files, bounded", []string{prev, cur}, 20, 20, 15, "line 15"},
		{"both files, all", []string{prev, cur}, 100, 35, 0, "line 0"},
		{"bounded below the first file's size", []string{prev, cur}, 4, 4, 31, "line 31"},
		{"no previous run", []string{filepath.Join(dir, "none.log"), cur}, 100, 10, 0, "line 25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, dropped, err := readEntries(t.Context(), oplog.Files(tt.files), tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.wantN || dropped != tt.wantDropped {
				t.Fatalf("got %d entries, %d dropped; want %d, %d", len(got), dropped, tt.wantN, tt.wantDropped)
			}
			if got[0].Message != tt.wantFirst || got[len(got)-1].Message != "line 34" {
				t.Errorf("got %q .. %q, want %q .. line 34", got[0].Message, got[len(got)-1].Message, tt.wantFirst)
			}
			if want := t0.Add(34 * time.Second); !got[len(got)-1].Time.Equal(want) {
				t.Errorf("last entry's time: got %v, want %v", got[len(got)-1].Time, want)
			}
		})
	}
}

func TestWriteTail(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	prev, cur := filepath.Join(dir, "prev.log"), filepath.Join(dir, "cur.log")
	criLog(t, prev, t0, 0, 50)
	criLog(t, cur, t0, 50, 60)
	curSize := fileSize(t, cur)
	for _, tt := range []struct {
		name  string
		max   int
		first string
	}{
		{"everything fits", 1 << 20, "line 0"},
		{"part of the previous run", int(curSize) + 200, ""},
		{"part of the current run", int(curSize) / 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "kept", strings.ReplaceAll(tt.name, " ", "-")+".log")
			if err := writeTail(out, []string{prev, cur, filepath.Join(dir, "none.log")}, tt.max); err != nil {
				t.Fatal(err)
			}
			if n := fileSize(t, out); n > int64(tt.max) || n == 0 {
				t.Errorf("kept %d bytes, want 1..%d", n, tt.max)
			}
			got, dropped, err := readEntries(t.Context(), oplog.Files{out}, 1000)
			if err != nil || dropped != 0 || len(got) == 0 {
				t.Fatalf("read the kept log: %d entries, %v", len(got), err)
			}
			if got[len(got)-1].Message != "line 59" {
				t.Errorf("newest kept line: got %q, want line 59", got[len(got)-1].Message)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Time.Sub(got[i-1].Time) != time.Second {
					t.Fatalf("kept lines %q then %q: want whole lines in order, none lost between", got[i-1].Raw, got[i].Raw)
				}
			}
			if tt.first != "" && got[0].Message != tt.first {
				t.Errorf("oldest kept line: got %q, want %q", got[0].Message, tt.first)
			}
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestDebriefKeepsTheOperatorLog, on a real cluster: a running session's
// debrief has the operator's log read from its cluster; after the stop
// deletes the cluster, the debrief still has it, from what was kept.
func TestDebriefKeepsTheOperatorLog(t *testing.T) {
	ctx := context.Background()
	a, err := Open(ctx, Config{DataDir: t.TempDir(), BinDir: clustertest.BinDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	t.Cleanup(func() { stopAll(t, a) })
	st, err := a.sessions.Start(ctx, session.StartOptions{Learner: "alice", Lab: "failover"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var live *Debrief
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if live, err = a.Debrief(ctx, st.ID); err != nil {
			t.Fatal(err)
		}
		if len(live.Log) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if live.LogSource != LogLive || len(live.Log) == 0 {
		t.Fatalf("running session: log from %q, %d lines; want live lines", live.LogSource, len(live.Log))
	}
	if len(live.Events) == 0 || live.Start.After(live.Events[0].At) || live.End.Before(live.Events[len(live.Events)-1].At) {
		t.Errorf("running session: axis %v..%v, %d events; want it to hold every event", live.Start, live.End, len(live.Events))
	}
	if _, err := a.sessions.Stop(ctx, st.ID, "the debrief test", nil); err != nil {
		t.Fatal(err)
	}
	ended, err := a.Debrief(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ended.LogSource != LogRecorded || len(ended.Log) < len(live.Log) {
		t.Fatalf("after the stop: log from %q, %d lines; want the recorded log, at least the %d lines seen live", ended.LogSource, len(ended.Log), len(live.Log))
	}
	if got, want := ended.Log[len(live.Log)-1], live.Log[len(live.Log)-1]; got.Message != want.Message || !got.Time.Equal(want.Time) {
		t.Errorf("recorded line %d: got %q at %v, want %q at %v as seen live", len(live.Log), got.Message, got.Time, want.Message, want.Time)
	}
	last := ended.Events[len(ended.Events)-1]
	if last.Kind != session.KindState || ended.State.Active() || ended.End.Before(last.At) {
		t.Errorf("after the stop: state %s, last event %s at %v, axis ends %v; want ended, the axis holding the stop", ended.State, last.Kind, last.At, ended.End)
	}
}

// BenchmarkDebriefLog reads a recorded operator log of MaxRecordedLog
// bytes into a debrief's entries, as the replay of an ended session does
// on each load.
func BenchmarkDebriefLog(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "kept.log")
	line := `{"time":"2026-12-07T09:00:00Z","level":"INFO","msg":"in sync, nothing to do","controller":"postgrescluster","PostgresCluster":{"name":"prod-db","namespace":"default"},"reconcileID":"0b7c","took":"1.2ms"}`
	var sb strings.Builder
	for i := 0; sb.Len() < MaxRecordedLog; i++ {
		fmt.Fprintf(&sb, "2026-12-07T09:%02d:%02d.000000000Z stderr F %s\n", i/60%60, i%60, line)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		got, _, err := readEntries(b.Context(), oplog.Files{path}, MaxDebriefLog)
		if err != nil || len(got) == 0 {
			b.Fatalf("read: %d entries, %v", len(got), err)
		}
	}
}

// TestDebriefWindow: the replay of a session with a long timeline and
// long log lines carries the newest MaxDebriefEvents events, says how many
// older ones it left out, and cuts each log line to what it draws.
func TestDebriefWindow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cr := newClassroom(t)
	now := time.Now().UTC()
	cr.seed(t, &store.Session{ID: "failover-a", Learner: cr.alice.Learner, Lab: "failover", State: string(session.Completed), Created: now.Add(-time.Hour)},
		map[string]any{}, nil)
	const more = MaxDebriefEvents + 500
	long := strings.Repeat("x", 16<<10)
	evs := make([]*store.Event, more)
	for i := range evs {
		evs[i] = &store.Event{Kind: session.KindConsole, Message: fmt.Sprintf("$ %d %s", i, long), At: now.Add(time.Duration(i-more) * time.Millisecond)}
	}
	if err := cr.a.store.AppendEvents(ctx, "failover-a", evs...); err != nil {
		t.Fatal(err)
	}
	logPath := cr.a.recordedLog("failover-a")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range 3 {
		fmt.Fprintf(&b, "%s stdout F level=ERROR msg=\"line %d %s\" error=%q\n", now.Add(time.Duration(i-3)*time.Second).Format(time.RFC3339Nano), i, long, long)
	}
	if err := os.WriteFile(logPath, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	d, err := cr.a.Debrief(ctx, "failover-a")
	if err != nil {
		t.Fatal(err)
	}
	// more events, and the seeded start's.
	if len(d.Events) != MaxDebriefEvents || d.EventsDropped != more+1-MaxDebriefEvents {
		t.Errorf("events: got %d and %d left out, want %d and %d", len(d.Events), d.EventsDropped, MaxDebriefEvents, more+1-MaxDebriefEvents)
	}
	if n := len(d.Events); n == 0 || !strings.HasPrefix(d.Events[n-1].Message, fmt.Sprintf("$ %d ", more-1)) || d.Events[0].Seq >= d.Events[n-1].Seq {
		t.Errorf("events: want the newest, oldest first")
	}
	if len(d.Log) != 3 || d.LogSource != LogRecorded {
		t.Fatalf("log: got %d lines from %q, want 3 recorded", len(d.Log), d.LogSource)
	}
	for i, l := range d.Log {
		if len(l.Message) > MaxDebriefLogText || len(l.Error) > MaxDebriefLogText || l.Raw != "" || !strings.HasPrefix(l.Message, fmt.Sprintf("line %d x", i)) {
			t.Errorf("log line %d: message %d bytes, error %d, raw %d; want its start, each at most %d, no raw",
				i, len(l.Message), len(l.Error), len(l.Raw), MaxDebriefLogText)
		}
	}
}
