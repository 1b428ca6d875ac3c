package session

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestLockAcrossManagers has two Managers share a lock directory, as two
// oplab commands in two terminals do: one waits while the other works on
// the session, and gives up when its context ends.
func TestLockAcrossManagers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	dir := t.TempDir()
	newManager := func() *Manager {
		m, err := New(Options{Store: f.store, Provider: f.m.o.Provider, Course: shippedCourse(t), LockDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	first, second := newManager(), newManager()
	f.seed(t, "a", "failover", Ready, 0, nil)

	unlock, err := first.lock(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 3*lockPoll)
	defer cancel()
	if _, err := second.Stop(short, "a", "", nil); err == nil || !strings.Contains(err.Error(), "busy with another oplab command") {
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
