package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// TestOpen opens the application on a fresh data directory: the store's
// file is there, the course is loaded, the session manager answers, and a
// second App on the same directory (a CLI command beside a server) sees
// the same sessions.
func TestOpen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	a, err := Open(ctx, Config{DataDir: dir, BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := os.Stat(filepath.Join(dir, store.FileName)); err != nil {
		t.Errorf("store file: %v", err)
	}
	if _, err := a.course.Lab("failover"); err != nil {
		t.Errorf("course: %v", err)
	}
	if a.clusters.Info().Name != Embedded {
		t.Errorf("provider: got %q, want %q", a.clusters.Info().Name, Embedded)
	}
	labs, err := a.sessions.Catalogue(ctx, LocalLearner, locale.En)
	if err != nil || len(labs) != len(a.course.Labs()) {
		t.Errorf("catalogue: got %d labs, %v; want %d", len(labs), err, len(a.course.Labs()))
	}
	if rep, err := a.Recover(ctx); err != nil || len(rep.Failed)+len(rep.Deleted) != 0 {
		t.Errorf("recover on an empty store: got %+v, %v; want nothing done", rep, err)
	}
	// A start fails without control-plane binaries, and is recorded.
	if _, err := a.sessions.Start(ctx, session.StartOptions{Learner: LocalLearner, Lab: "rbac"}, nil); err == nil {
		t.Fatal("start without binaries: got nil error")
	}
	b, err := Open(ctx, Config{DataDir: dir, BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if id, err := b.sessions.Resolve(ctx, LocalLearner, "", ""); err != nil || !strings.HasPrefix(id, "rbac-") {
		t.Errorf("second app: got %q, %v; want the rbac session the first recorded", id, err)
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	broken := course.Embedded()
	broken.Quizzes = fstest.MapFS{}
	tests := []struct {
		name string
		c    Config
		want string
	}{
		{"no data dir", Config{}, "no data directory"},
		{"unknown provider", Config{DataDir: t.TempDir(), Provider: "nope"}, `unknown cluster provider "nope"`},
		{"broken course", Config{DataDir: t.TempDir(), Course: broken}, "load course"},
	}
	for _, tt := range tests {
		a, err := Open(t.Context(), tt.c)
		if a != nil || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, %v; want an error containing %q", tt.name, a, err, tt.want)
		}
	}
}

func TestReady(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	a, err := Open(ctx, Config{DataDir: dir, BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Ready(ctx); err != nil {
		t.Errorf("ready: got %v, want nil", err)
	}
	// The provider cannot read its clusters: not ready, and it says why.
	clusters := filepath.Join(dir, "clusters")
	if err := os.WriteFile(clusters, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.Ready(ctx); err == nil || !strings.Contains(err.Error(), "embedded cluster provider") {
		t.Errorf("ready with an unreadable clusters directory: got %v, want the provider's error", err)
	}
	os.Remove(clusters)
	a.Close()
	if err := a.Ready(ctx); err == nil || !strings.Contains(err.Error(), "store") {
		t.Errorf("ready with the store closed: got %v, want the store's error", err)
	}
}
