package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"oplab.dev/oplab/internal/pgtest"
)

// TestLockAcrossServers: two stores on one PostgreSQL database, as two
// replicas: a lock one holds the other cannot take until it is released
// or its holder's connection goes (a killed server), and waiting for it
// ends with the context.
func TestLockAcrossServers(t *testing.T) {
	url := pgtest.Fresh(t)
	ctx := context.Background()
	open := func() *DB {
		s, err := OpenPostgres(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
	if !a.SharedLocks() {
		t.Fatal("PostgreSQL store without shared locks")
	}
	release, err := a.Lock(ctx, "session/s1", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx, "session/s1", false); !errors.Is(err, ErrLocked) {
		t.Fatalf("second holder: got %v, want ErrLocked", err)
	}
	other, err := b.Lock(ctx, "session/s2", false)
	if err != nil {
		t.Fatalf("another key: %v", err)
	}
	other()
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(wctx, "session/s1", true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting on a held lock: got %v, want the deadline", err)
	}
	got := make(chan error, 1)
	go func() {
		r, err := b.Lock(ctx, "session/s1", true)
		if err == nil {
			r()
		}
		got <- err
	}()
	release()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter after release: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter never got the released lock")
	}

	// A server that dies with the lock held: its connection ends (here the
	// server ends it, as when the pod's TCP connection drops), and the lock
	// with it.
	c := open()
	if _, err := c.Lock(ctx, "session/s3", false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.sql.ExecContext(ctx, "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted"); err != nil {
		t.Fatal(err)
	}
	// The backend ends a moment after it is told to.
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	r, err := a.Lock(dctx, "session/s3", true)
	if err != nil {
		t.Fatalf("after its holder closed: %v", err)
	}
	r()
}

func TestLockNeedsPostgres(t *testing.T) {
	s, err := OpenDir(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.SharedLocks() {
		t.Error("SQLite reports shared locks")
	}
	if _, err := s.Lock(context.Background(), "k", false); err == nil {
		t.Error("Lock on SQLite: got nil error")
	}
}
