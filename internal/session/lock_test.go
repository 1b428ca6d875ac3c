package session

import (
	"context"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/pgtest"
	"oplab.dev/oplab/internal/store"
)

// TestLockAcrossManagers has two Managers share a lock directory, as two
// oplab commands in two terminals do: one waits while the other works on
// the session, and gives up when its context ends.
func TestLockAcrossManagers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := t.TempDir()
	newManager := func() *Manager {
		m, err := New(Options{Store: f.store, Provider: f.m.o.Provider, Course: shippedCourse(t), LockDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	f.seed(t, "a", "failover", Ready, 0, nil)
	lockAcross(t, newManager(), newManager(), "busy with another oplab command")
}

// TestLockAcrossServers has two Managers share a PostgreSQL store and
// nothing else — each its own lock directory, as two replicas on two
// machines — and they take turns on a session as two commands do.
func TestLockAcrossServers(t *testing.T) {
	t.Parallel()
	url := pgtest.Fresh(t)
	p, err := cluster.NewProvider(cluster.ProviderWithEmbedded(t.TempDir(), t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	var stores []*store.DB
	newManager := func() *Manager {
		st, err := store.OpenPostgres(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores = append(stores, st)
		m, err := New(Options{Store: st, Provider: p, Course: shippedCourse(t), LockDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	first, second := newManager(), newManager()
	f := &fixture{m: first, store: stores[0]}
	f.seed(t, "a", "failover", Ready, 0, nil)
	lockAcross(t, first, second, "busy with another oplab server")
}

// lockAcross: while first holds session a's lock, second's Stop waits
// (giving up, saying busy, when its context ends) and goes on once first
// lets go.
func lockAcross(t *testing.T, first, second *Manager, busy string) {
	ctx := t.Context()

	unlock, err := first.lock(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 3*lockPoll)
	defer cancel()
	if _, err := second.Stop(short, "a", "", nil); err == nil || !strings.Contains(err.Error(), busy) {
		t.Errorf("stop while another holds the lock, until the deadline: got %v, want busy", err)
	}
	if _, ok := second.tryLock("a"); ok {
		t.Error("tryLock while another holds the lock: got it, want refused")
	}

	done := make(chan error, 1)
	go func() {
		_, err := second.Stop(ctx, "a", "", nil)
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("stop returned (%v) while another held the lock", err)
	case <-time.After(5 * lockPoll):
	}
	unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stop did not go on within 5 s of the lock's release")
	}
	if st, _ := first.Status(ctx, "a"); st.State != Expired {
		t.Errorf("state after the waiting stop: got %s, want expired", st.State)
	}
}
