package store

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// The tests in this file hold what several oplab servers sharing one
// database rely on.

// TestConcurrentOpenMigratesOnce opens a new database with several
// handles at once, as replicas started together do: every open succeeds,
// and each schema step is applied once.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		where := b.fresh(t)
		const opens = 4
		stores, errs := make([]*DB, opens), make([]error, opens)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range opens {
			wg.Go(func() {
				<-start
				stores[i], errs[i] = b.open(ctx, where)
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("open %d of %d at once: %v", i+1, opens, err)
				continue
			}
			t.Cleanup(func() { stores[i].Close() })
		}
		var steps, latest int
		if err := b.raw(t, where).QueryRowContext(ctx, `SELECT COUNT(*), MAX(version) FROM schema_migrations`).Scan(&steps, &latest); err != nil {
			t.Fatal(err)
		}
		if steps != SchemaVersion() || latest != SchemaVersion() {
			t.Errorf("schema steps recorded: got %d up to version %d, want %d up to %d", steps, latest, SchemaVersion(), SchemaVersion())
		}
	})
}

// TestEventsCommitInSeqOrder: an event append waits for an earlier one
// whose transaction has not committed, so that a watcher that has read
// every event up to a seq (EventsAfter) never later finds one below it.
func TestEventsCommitInSeqOrder(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		for _, id := range []string{"a", "b"} {
			if err := s.CreateSession(ctx, newSession(id, "alice", "failover", "ready")); err != nil {
				t.Fatal(err)
			}
		}
		first, second := &Event{Kind: "first"}, &Event{Kind: "second"}
		appended, release := make(chan struct{}), make(chan struct{})
		firstDone := make(chan error, 1)
		go func() {
			firstDone <- s.tx(ctx, func(tx conn) error {
				if err := appendEvents(ctx, tx, "a", []*Event{first}); err != nil {
					close(appended)
					return err
				}
				close(appended)
				<-release
				return nil
			})
		}()
		<-appended
		secondDone := make(chan error, 1)
		go func() { secondDone <- s.AppendEvents(ctx, "b", second) }()
		select {
		case err := <-secondDone:
			t.Errorf("append while an earlier append is uncommitted: returned (%v) at once, want it to wait for the commit", err)
			secondDone <- err
		case <-time.After(300 * time.Millisecond):
		}
		close(release)
		if err := <-firstDone; err != nil {
			t.Fatal(err)
		}
		if err := <-secondDone; err != nil {
			t.Fatal(err)
		}
		if second.Seq <= first.Seq {
			t.Errorf("seqs: got %d committed after %d, want a greater one", second.Seq, first.Seq)
		}
	})
}

// TestTextOrder: lists ordered by text come out in the same order on
// every backend, by the text's bytes (SQLite's order), whatever the
// database's default collation (the test PostgreSQL server's is en-US,
// which would put "ada" before "Bob").
func TestTextOrder(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		s := b.newStore(t)
		for _, name := range []string{"ada", "Zed", "Bob", "éva"} {
			newInstructor(t, s, name)
		}
		all, err := s.Instructors(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, in := range all {
			got = append(got, in.Name)
		}
		if want := []string{"Bob", "Zed", "ada", "éva"}; !slices.Equal(got, want) {
			t.Errorf("instructors: got %v, want %v", got, want)
		}
	})
}
