package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/pgtest"
	"oplab.dev/oplab/internal/store"
)

// TestOpenOnPostgres opens oplab on a PostgreSQL store, as replicas on
// Kubernetes do: what one App writes, another App opened on the same URL
// (and another data directory) reads, and no SQLite file is made.
func TestOpenOnPostgres(t *testing.T) {
	url := pgtest.Fresh(t)
	ctx := context.Background()
	open := func() (*App, string) {
		dir := t.TempDir()
		a, err := Open(ctx, Config{DataDir: dir, BinDir: t.TempDir(), Store: url})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		return a, dir
	}
	a, dirA := open()
	if _, err := a.AddInstructor(ctx, "ines", "a long enough password", true); err != nil {
		t.Fatal(err)
	}
	b, _ := open()
	got, err := b.Instructors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "ines" {
		t.Fatalf("instructors through a second App on the same store: %+v", got)
	}
	if _, err := os.Stat(filepath.Join(dirA, store.FileName)); !os.IsNotExist(err) {
		t.Errorf("a SQLite file was made beside a PostgreSQL store: %v", err)
	}
}

// TestOpenRefusesAnUnknownStore names what a store may be and does not
// repeat the value, which may hold a password.
func TestOpenRefusesAnUnknownStore(t *testing.T) {
	_, err := Open(context.Background(), Config{DataDir: t.TempDir(), BinDir: t.TempDir(), Store: "mysql://root:hunter2@db/oplab"})
	if err == nil || !strings.Contains(err.Error(), "postgres://") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("got %v, want a refusal naming postgres:// and not the password", err)
	}
}
