package store

import (
	"testing"
	"time"
)

// TestMarkSeen: a mark keeps the latest time a session was seen, does not
// change its version (a page read beside a command's write is no
// conflict), and survives the session's updates, which do not write it.
func TestMarkSeen(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		a := newSession("a", "alice", "failover", "ready")
		if err := s.CreateSession(ctx, a); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Session(ctx, "a"); err != nil || !got.Seen.IsZero() {
			t.Fatalf("a new session: seen %v (%v), want never", got.Seen, err)
		}
		later := time.Now().UTC().Add(time.Minute).Truncate(time.Microsecond)
		earlier := later.Add(-30 * time.Second)
		for _, at := range []time.Time{later, earlier} {
			if err := s.MarkSeen(ctx, "a", at); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Session(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if !got.Seen.Equal(later) || got.Version != a.Version {
			t.Errorf("after two marks: seen %v at version %d, want the later %v at version %d", got.Seen, got.Version, later, a.Version)
		}
		// The session read before the marks is written without a conflict,
		// and the mark stays.
		a.State = "in-exercise"
		if err := s.UpdateSession(ctx, a); err != nil {
			t.Fatalf("update after a mark: %v", err)
		}
		list, err := s.Sessions(ctx, Filter{Learner: "alice"})
		if err != nil || len(list) != 1 || !list[0].Seen.Equal(later) {
			t.Errorf("listed after an update: %+v (%v), want seen %v", list, err, later)
		}
		if err := s.MarkSeen(ctx, "ghost", later); err != nil {
			t.Errorf("a mark on no session: %v, want nothing done", err)
		}
	})
}
