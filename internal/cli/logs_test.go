package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/oplog"
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

const ts = "2026-01-02T03:04:05.000000006Z"

// TestTailLog follows a CRI log file as the operator writes it: whole and
// partial lines, a line written in two pieces, and a restart of the
// operator that moves the file aside and starts a new one.
func TestTailLog(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pg-operator.log")
	appendFile(t, path, ts+" stderr F first line\n"+ts+" stderr P one \n"+ts+" stderr F line in parts\nnot cri at all\n")

	var once syncBuffer
	if err := printLog(t.Context(), oplog.Files{path}, logPrinter{w: &once}, false); err != nil {
		t.Fatal(err)
	}
	if got, want := once.String(), "first line\none line in parts\nnot cri at all\n"; got != want {
		t.Errorf("without -f: got %q, want %q", got, want)
	}

	ctx, cancel := context.WithCancel(t.Context())
	var buf syncBuffer
	done := make(chan error, 1)
	go func() { done <- printLog(ctx, oplog.Files{path}, logPrinter{w: &buf}, true) }()
	waitFor(t, &buf, "not cri at all", 5*time.Second)
	appendFile(t, path, ts+" stderr F half")
	time.Sleep(3 * oplog.DefaultPoll)
	if strings.Contains(buf.String(), "half") {
		t.Errorf("printed a line before its newline: %q", buf.String())
	}
	appendFile(t, path, " and whole\n"+ts+" stderr F before the restart\n")
	// A restart: the old file is moved aside, a new one started.
	if err := os.Rename(path, path+".previous"); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, ts+" stderr F after the restart\n")
	waitFor(t, &buf, "after the restart", 5*time.Second)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("tail -f ended with %v", err)
	}
	want := "first line\none line in parts\nnot cri at all\nhalf and whole\nbefore the restart\nafter the restart\n"
	if got := buf.String(); got != want {
		t.Errorf("with -f: got %q, want %q", got, want)
	}
}

func TestTailLogMissing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pg-operator.log")
	if err := printLog(t.Context(), oplog.Files{path}, logPrinter{w: &syncBuffer{}}, false); err == nil || !strings.Contains(err.Error(), "is the operator installed") {
		t.Errorf("missing log without -f: got %v, want an error asking whether the operator is installed", err)
	}
	// With -f a log that does not exist yet is waited for.
	ctx, cancel := context.WithCancel(t.Context())
	var buf syncBuffer
	done := make(chan error, 1)
	go func() { done <- printLog(ctx, oplog.Files{path}, logPrinter{w: &buf}, true) }()
	time.Sleep(2 * oplog.DefaultPoll)
	appendFile(t, path, ts+" stderr F late\n")
	waitFor(t, &buf, "late", 5*time.Second)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("tail -f ended with %v", err)
	}
}

func TestStyle(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if s := newStyle(&b, false); s.color || s.ok("x") != "x" {
		t.Errorf("style of a non-terminal: got colour %v, ok(x) %q; want none", s.color, s.ok("x"))
	}
	if got := (style{color: true}).bad("x"); got != "\x1b[31mx\x1b[0m" {
		t.Errorf("bad(x) in colour: got %q", got)
	}
	for in, want := range map[string]string{
		"/tmp/a/kubeconfig": "/tmp/a/kubeconfig",
		"/tmp/my dir/kc":    "'/tmp/my dir/kc'",
		"/tmp/it's":         `'/tmp/it'\''s'`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q): got %s, want %s", in, got, want)
		}
	}
}

// TestLogPrinter prints the operator's lines as a terminal shows them (a
// pass as its watch, diff, act and status; an idle pass on one line; any
// other line as written, coloured by its level) and as -o json (each
// line's Entry, its pass included).
func TestLogPrinter(t *testing.T) {
	t.Parallel()
	// Lines as the operator's logger writes them (slog text), in its
	// zone, so that the time shown is the line's own.
	pass := `time=2026-01-02T03:04:05.678Z level=INFO msg="changed the cluster" controller=postgrescluster namespace=default name=prod-db ` +
		`read="pods: prod-db-0 terminating, prod-db-1 replica@0/3000060" primary=prod-db-0 instances=simulated differs="primary pod prod-db-0 is being deleted" ` +
		`did="labelled prod-db-0 role primary → unhealthy; elected prod-db-1: the ready replica furthest ahead (WAL 0/3000060); wrote status (phase FailingOver)" took=3.412ms next=200ms`
	idle := `time=2026-01-02T03:04:06Z level=INFO msg="in sync, nothing to do" namespace=default name=prod-db read="pods: prod-db-1 primary@0/3000100" primary=prod-db-1 took=412µs`
	failed := `time=2026-01-02T03:04:07Z level=ERROR msg="Reconciler error" namespace=default name=prod-db error="pods is forbidden"`
	clock := func(s string) string {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.Local().Format("15:04:05.000")
	}
	tests := []struct {
		name  string
		p     logPrinter
		lines []string
		want  string
	}{
		{
			name:  "text",
			lines: []string{pass, idle, "plain text"},
			want: clock("2026-01-02T03:04:05.678Z") + " default/prod-db changed the cluster (took 3.4ms, next in 200ms)\n" +
				"  watch  pods: prod-db-0 terminating, prod-db-1 replica@0/3000060\n" +
				"  diff   primary pod prod-db-0 is being deleted\n" +
				"  act    labelled prod-db-0 role primary → unhealthy\n" +
				"         elected prod-db-1: the ready replica furthest ahead (WAL 0/3000060)\n" +
				"  status wrote phase FailingOver, primary prod-db-0\n" +
				clock("2026-01-02T03:04:06Z") + " default/prod-db in sync, nothing to do (took 412µs)\n" +
				"plain text\n",
		},
		{
			name:  "colour by level",
			p:     logPrinter{s: style{color: true}},
			lines: []string{failed},
			want:  "\x1b[31m" + failed + "\x1b[0m\n",
		},
		{
			name:  "json",
			p:     logPrinter{json: true},
			lines: []string{idle, "plain text"},
			want: `{"time":"2026-01-02T03:04:06Z","stream":"stdout","level":"info","object":"default/prod-db","message":"in sync, nothing to do",` +
				`"pass":{"watch":["pods: prod-db-1 primary@0/3000100"],"primary":"prod-db-1","tookMs":0,"idle":true},"raw":` + strconv.Quote(idle) + "}\n" +
				`{"time":"2026-01-02T03:04:08Z","stream":"stdout","message":"plain text","raw":"plain text"}` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			tt.p.w = &b
			for _, l := range tt.lines {
				if err := tt.p.line(oplog.Line{Time: time.Date(2026, 1, 2, 3, 4, 8, 0, time.UTC), Stream: "stdout", Text: l}); err != nil {
					t.Fatal(err)
				}
			}
			if got := b.String(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
