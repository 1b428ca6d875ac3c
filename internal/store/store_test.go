package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func newSession(id, learner, lab, state string) *Session {
	return &Session{ID: id, Learner: learner, Lab: lab, Cluster: "c-" + id, Provider: "embedded", State: state, Lang: "en"}
}

func TestSessionsRoundTrip(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		a := newSession("a", "alice", "failover", "provisioning")
		if err := s.CreateSession(ctx, a, &Event{Kind: "state", Message: "created"}); err != nil {
			t.Fatal(err)
		}
		if a.Version != 1 || a.Created.IsZero() {
			t.Errorf("after create: version %d, created %v; want 1 and a time", a.Version, a.Created)
		}
		if err := s.CreateSession(ctx, newSession("a", "bob", "rbac", "ready")); !errors.Is(err, ErrExists) {
			t.Errorf("duplicate create: got %v, want ErrExists", err)
		}
		got, err := s.Session(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if got.Learner != "alice" || got.Lab != "failover" || got.Cluster != "c-a" || got.State != "provisioning" || got.Version != 1 || !got.Created.Equal(a.Created) {
			t.Errorf("read back: got %+v, want %+v", got, *a)
		}
		if _, err := s.Session(ctx, "ghost"); !errors.Is(err, ErrNotFound) {
			t.Errorf("missing session: got %v, want ErrNotFound", err)
		}

		got.State, got.Exercise = "ready", 2
		if err := s.UpdateSession(ctx, &got, &Event{Kind: "state", Message: "ready"}); err != nil {
			t.Fatal(err)
		}
		if got.Version != 2 {
			t.Errorf("version after update: got %d, want 2", got.Version)
		}
		stale := *a // version 1
		stale.State = "failed"
		if err := s.UpdateSession(ctx, &stale, &Event{Kind: "state", Message: "lost"}); !errors.Is(err, ErrConflict) {
			t.Errorf("stale update: got %v, want ErrConflict", err)
		}
		ghost := newSession("ghost", "x", "y", "ready")
		ghost.Version = 1
		if err := s.UpdateSession(ctx, ghost); !errors.Is(err, ErrNotFound) {
			t.Errorf("update of a missing session: got %v, want ErrNotFound", err)
		}
		evs, err := s.Events(ctx, "a", 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2 || evs[0].Message != "created" || evs[1].Message != "ready" {
			t.Errorf("timeline: got %+v, want created then ready (the stale update's event must not be there)", evs)
		}
		now, _ := s.Session(ctx, "a")
		if now.State != "ready" || now.Exercise != 2 {
			t.Errorf("state after stale update: got %s/%d, want ready/2", now.State, now.Exercise)
		}
	})
}

func TestSessionsFilter(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		base := time.Now().Add(-time.Hour)
		for i, sess := range []*Session{
			newSession("s1", "alice", "failover", "completed"),
			newSession("s2", "alice", "rbac", "ready"),
			newSession("s3", "bob", "rbac", "in-exercise"),
			newSession("s4", "alice", "quota", "in-exercise"),
		} {
			sess.Created = base.Add(time.Duration(i) * time.Minute)
			if err := s.CreateSession(ctx, sess); err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			name string
			f    Filter
			want []string
		}{
			{"all, newest first", Filter{}, []string{"s4", "s3", "s2", "s1"}},
			{"learner", Filter{Learner: "alice"}, []string{"s4", "s2", "s1"}},
			{"lab", Filter{Lab: "rbac"}, []string{"s3", "s2"}},
			{"states", Filter{Learner: "alice", States: []string{"ready", "in-exercise"}}, []string{"s4", "s2"}},
			{"nothing", Filter{Learner: "carol"}, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				list, err := s.Sessions(ctx, tt.f)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, l := range list {
					got = append(got, l.ID)
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			})
		}
	})
}

func TestEventsAndResults(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		if err := s.CreateSession(ctx, newSession("a", "alice", "failover", "ready")); err != nil {
			t.Fatal(err)
		}
		t0 := time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC)
		evs := []*Event{
			{Kind: "chaos", Exercise: "delete-primary", At: t0, Message: "deleted prod-db-0", Data: json.RawMessage(`{"t0":"x"}`)},
			{Kind: "check", Exercise: "delete-primary", Message: "3/3"},
		}
		if err := s.AppendEvents(ctx, "a", evs...); err != nil {
			t.Fatal(err)
		}
		if evs[0].Seq == 0 || evs[1].Seq <= evs[0].Seq {
			t.Errorf("seqs: got %d, %d, want growing from above 0", evs[0].Seq, evs[1].Seq)
		}
		if err := s.AppendEvents(ctx, "ghost", &Event{Kind: "x"}); err == nil {
			t.Error("append to a missing session: got nil error, want a foreign key error")
		}
		all, err := s.Events(ctx, "a", 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2 || !all[0].At.Equal(t0) || string(all[0].Data) != `{"t0":"x"}` || string(all[1].Data) != "{}" {
			t.Errorf("timeline: got %+v", all)
		}
		after, _ := s.Events(ctx, "a", evs[0].Seq, 100)
		if len(after) != 1 || after[0].Kind != "check" {
			t.Errorf("events after seq %d: got %+v, want the check only", evs[0].Seq, after)
		}

		r := &Result{SessionID: "a", Kind: ResultExercise, Item: "delete-primary", Score: 2, Total: 5, Recovery: 1500 * time.Millisecond}
		if err := s.PutResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		r.Score, r.Passed, r.Recovery = 5, true, 1200*time.Millisecond
		if err := s.PutResult(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := s.PutResult(ctx, &Result{SessionID: "a", Kind: ResultQuiz, Item: "failover", Score: 3, Total: 4}); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Results(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 2 {
			t.Fatalf("results: got %d, want 2 (the exercise's replaced, one quiz)", len(rs))
		}
		ex := rs[0]
		if ex.Kind != ResultExercise || ex.Score != 5 || !ex.Passed || ex.Recovery != 1200*time.Millisecond {
			t.Errorf("exercise result: got %+v, want the replacing 5/5 passed in 1.2s", ex)
		}

		if err := s.CreateSession(ctx, newSession("b", "bob", "rbac", "ready"), &Event{Kind: "state", Message: "b1"}); err != nil {
			t.Fatal(err)
		}
		across, err := s.EventsAfter(ctx, evs[0].Seq, 10)
		if err != nil || len(across) != 2 || across[0].SessionID != "a" || across[1].SessionID != "b" {
			t.Errorf("events of every session after seq %d: got %+v, %v; want a's check then b's state", evs[0].Seq, across, err)
		}
		if one, _ := s.EventsAfter(ctx, 0, 1); len(one) != 1 || one[0].Seq != evs[0].Seq {
			t.Errorf("events after 0, limit 1: got %+v, want the first", one)
		}
		if last, err := s.LastEventSeq(ctx); err != nil || last != across[1].Seq {
			t.Errorf("last event seq: got %d, %v; want %d (b's state)", last, err, across[1].Seq)
		}

		if err := s.DeleteSession(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if evs, _ := s.Events(ctx, "a", 0, 100); len(evs) != 0 {
			t.Errorf("timeline after delete: got %d events, want 0", len(evs))
		}
		if err := s.DeleteSession(ctx, "a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("second delete: got %v, want ErrNotFound", err)
		}
	})
}

// TestReopen closes the store and opens it again, as a restarted oplab
// does: nothing is lost and the schema is not migrated twice.
func TestReopen(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		where := b.fresh(t)
		s, err := b.open(ctx, where)
		if err != nil {
			t.Fatal(err)
		}
		sess := newSession("a", "alice", "failover", "provisioning")
		if err := s.CreateSession(ctx, sess, &Event{Kind: "state"}); err != nil {
			t.Fatal(err)
		}
		sess.State = "in-exercise"
		if err := s.UpdateSession(ctx, sess, &Event{Kind: "chaos"}, &Event{Kind: "check"}); err != nil {
			t.Fatal(err)
		}
		if err := s.PutResult(ctx, &Result{SessionID: "a", Kind: ResultExercise, Item: "x", Score: 1, Total: 1, Passed: true}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}

		s2 := b.openStore(t, where)
		got, err := s2.Session(ctx, "a")
		if err != nil || got.State != "in-exercise" || got.Version != 2 {
			t.Errorf("session after reopen: got %+v, %v; want in-exercise, version 2", got, err)
		}
		if evs, _ := s2.Events(ctx, "a", 0, 100); len(evs) != 3 {
			t.Errorf("timeline after reopen: got %d events, want 3", len(evs))
		}
		if rs, _ := s2.Results(ctx, "a"); len(rs) != 1 || !rs[0].Passed {
			t.Errorf("results after reopen: got %+v, want one passed", rs)
		}
		if v, err := s2.Version(ctx); err != nil || v != SchemaVersion() {
			t.Errorf("schema version: got %d (%v), want %d", v, err, SchemaVersion())
		}
		if b.d == postgresDialect {
			var timeout string
			if err := s2.db.QueryRowContext(ctx, "SHOW lock_timeout").Scan(&timeout); err != nil || timeout != "10s" {
				t.Errorf("lock timeout: got %q (%v), want 10s (BusyTimeout, as on SQLite)", timeout, err)
			}
			return
		}
		var mode string
		if err := s2.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal mode: got %q (%v), want wal", mode, err)
		}
	})
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		where := b.fresh(t)
		s := b.openStore(t, where)
		if _, err := s.db.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)`, SchemaVersion()+1); err != nil {
			t.Fatal(err)
		}
		if s2, err := b.open(ctx, where); err == nil {
			s2.Close()
			t.Fatal("open a database from a newer oplab: got nil error, want a refusal")
		}
	})
}

// TestConcurrentWriters has several handles on one database (as several
// oplab processes would) append to a timeline and update one session at once;
// every write lands and optimistic updates retry on conflict.
func TestConcurrentWriters(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		where := b.fresh(t)
		first := b.openStore(t, where)
		if err := first.CreateSession(ctx, newSession("a", "alice", "failover", "ready")); err != nil {
			t.Fatal(err)
		}
		const writers, each = 4, 25
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			s := b.openStore(t, where)
			wg.Go(func() {
				for i := range each {
					if err := s.AppendEvents(ctx, "a", &Event{Kind: "check", Message: fmt.Sprintf("w%d-%d", w, i)}); err != nil {
						errs <- err
						return
					}
					if err := bump(ctx, s, "a"); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		evs, err := first.Events(ctx, "a", 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != writers*each*2 {
			t.Errorf("events: got %d, want %d", len(evs), writers*each*2)
		}
		got, _ := first.Session(ctx, "a")
		if got.Exercise != writers*each || got.Version != int64(writers*each+1) {
			t.Errorf("session after %d increments: exercise %d, version %d; want %d and %d", writers*each, got.Exercise, got.Version, writers*each, writers*each+1)
		}
	})
}

// bump increments a session's exercise counter, retrying on conflict.
func bump(ctx context.Context, s *DB, id string) error {
	for {
		sess, err := s.Session(ctx, id)
		if err != nil {
			return err
		}
		sess.Exercise++
		err = s.UpdateSession(ctx, &sess, &Event{Kind: "bump"})
		if !errors.Is(err, ErrConflict) {
			return err
		}
	}
}
