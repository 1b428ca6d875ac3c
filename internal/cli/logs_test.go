package cli

import (
	"context"
	"os"
	"path/filepath"
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
	if err := printLog(t.Context(), oplog.Files{path}, &once, style{}, false); err != nil {
		t.Fatal(err)
	}
	if got, want := once.String(), "first line\none line in parts\nnot cri at all\n"; got != want {
		t.Errorf("without -f: got %q, want %q", got, want)
	}

	ctx, cancel := context.WithCancel(t.Context())
	var buf syncBuffer
	done := make(chan error, 1)
	go func() { done <- printLog(ctx, oplog.Files{path}, &buf, style{}, true) }()
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
	if err := printLog(t.Context(), oplog.Files{path}, &syncBuffer{}, style{}, false); err == nil || !strings.Contains(err.Error(), "is the operator installed") {
		t.Errorf("missing log without -f: got %v, want an error asking whether the operator is installed", err)
	}
	// With -f a log that does not exist yet is waited for.
	ctx, cancel := context.WithCancel(t.Context())
	var buf syncBuffer
	done := make(chan error, 1)
	go func() { done <- printLog(ctx, oplog.Files{path}, &buf, style{}, true) }()
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
	if s := newStyle(&b); s.color || s.ok("x") != "x" {
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
