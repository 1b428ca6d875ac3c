package store

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

// TestMigrateFromVersion2 opens a database with sessions from before classes
// existed: it gains the class tables, and its sessions survive and can be
// linked to a class.
func TestMigrateFromVersion2(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		where := b.fresh(t)
		old := b.raw(t, where)
		for _, stmt := range []string{
			`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`,
			migrations[0], migrations[1],
			`INSERT INTO schema_migrations VALUES (1, 0), (2, 0)`,
			`INSERT INTO sessions (id, learner, lab, cluster, provider, state, created_at, updated_at) VALUES ('old', 'alice', 'rbac', 'c', 'embedded', 'ready', 1, 1)`,
		} {
			if _, err := old.ExecContext(ctx, b.d.schema(stmt)); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		old.Close()

		s := b.openStore(t, where)
		if v, _ := s.Version(ctx); v != SchemaVersion() {
			t.Errorf("schema version after open: got %d, want %d", v, SchemaVersion())
		}
		c := newClass(t, s, "morning", "ABCDEFGHJK")
		if err := s.LinkSession(ctx, "old", c.ID); err != nil {
			t.Fatal(err)
		}
		got, err := s.ClassSessions(ctx, c.ID)
		if err != nil || len(got) != 1 || got[0].ID != "old" || got[0].Learner != "alice" {
			t.Errorf("class sessions: got %+v, %v; want the old session", got, err)
		}
	})
}

func newInstructor(t *testing.T, s *DB, name string) *Instructor {
	t.Helper()
	in := &Instructor{Name: name, PasswordHash: "$argon2id$test"}
	if err := s.CreateInstructor(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	return in
}

func newClass(t *testing.T, s *DB, name, code string) *Class {
	t.Helper()
	if _, err := s.Instructor(t.Context(), "ada"); errors.Is(err, ErrNotFound) {
		newInstructor(t, s, "ada")
	}
	c := &Class{ID: "id-" + name, Name: name, Labs: []string{"failover", "rbac"}, JoinCode: code, Capacity: 2, Owner: "ada",
		Opens: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC), TimeLimit: 90 * time.Minute, Warm: map[string]int{"failover": 2}}
	if err := s.CreateClass(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestInstructors(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		ada := newInstructor(t, s, "ada")
		newInstructor(t, s, "bob")
		if err := s.CreateInstructor(ctx, &Instructor{Name: "ada", PasswordHash: "x"}); !errors.Is(err, ErrExists) {
			t.Errorf("duplicate instructor: got %v, want ErrExists", err)
		}
		stale := *ada
		ada.Admin, ada.PasswordHash = true, "$argon2id$new"
		if err := s.UpdateInstructor(ctx, ada); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateInstructor(ctx, &stale); !errors.Is(err, ErrConflict) {
			t.Errorf("stale update: got %v, want ErrConflict", err)
		}
		got, err := s.Instructor(ctx, "ada")
		if err != nil || !got.Admin || got.PasswordHash != "$argon2id$new" || got.Version != 2 {
			t.Errorf("after update: got %+v, %v; want admin, the new hash, version 2", got, err)
		}
		if _, err := s.Instructor(ctx, "eve"); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown instructor: got %v, want ErrNotFound", err)
		}
		all, err := s.Instructors(ctx)
		if err != nil || len(all) != 2 || all[0].Name != "ada" || all[1].Name != "bob" {
			t.Errorf("instructors: got %+v, %v; want ada, bob", all, err)
		}
	})
}

func TestClassesRoundTrip(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		c := newClass(t, s, "morning", "ABCDEFGHJK")
		for _, read := range []func() (Class, error){
			func() (Class, error) { return s.Class(ctx, c.ID) },
			func() (Class, error) { return s.ClassByName(ctx, "morning") },
			func() (Class, error) { return s.ClassByCode(ctx, "ABCDEFGHJK") },
		} {
			got, err := read()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Labs, c.Labs) || !reflect.DeepEqual(got.Warm, c.Warm) || !got.Opens.Equal(c.Opens) || !got.Closes.IsZero() || got.TimeLimit != c.TimeLimit ||
				got.Capacity != 2 || got.Owner != "ada" || got.JoinCode != c.JoinCode || got.Version != 1 {
				t.Errorf("read back: got %+v, want %+v", got, *c)
			}
		}
		tests := []struct {
			name string
			c    Class
			want error
		}{
			{"taken name", Class{ID: "x1", Name: "morning", JoinCode: "OTHER", Owner: "ada"}, ErrExists},
			{"taken code", Class{ID: "x2", Name: "evening", JoinCode: "ABCDEFGHJK", Owner: "ada"}, ErrExists},
			{"unknown owner", Class{ID: "x3", Name: "night", JoinCode: "NIGHT", Owner: "eve"}, ErrNotFound},
		}
		for _, tt := range tests {
			if err := s.CreateClass(ctx, &tt.c); !errors.Is(err, tt.want) {
				t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
			}
		}
		if _, err := s.ClassByCode(ctx, "abcdefghjk"); !errors.Is(err, ErrNotFound) {
			t.Errorf("code in another case: got %v, want ErrNotFound (codes are compared exactly)", err)
		}

		stale := *c
		c.Closed, c.Labs = true, []string{"rbac"}
		if err := s.UpdateClass(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateClass(ctx, &stale); !errors.Is(err, ErrConflict) {
			t.Errorf("stale update: got %v, want ErrConflict", err)
		}
		got, _ := s.Class(ctx, c.ID)
		if !got.Closed || !reflect.DeepEqual(got.Labs, []string{"rbac"}) || got.Version != 2 {
			t.Errorf("after update: got %+v, want closed, labs [rbac], version 2", got)
		}

		newInstructor(t, s, "bob")
		other := &Class{ID: "id-b", Name: "bobs", JoinCode: "BOBBOBBOB2", Owner: "bob"}
		if err := s.CreateClass(ctx, other); err != nil {
			t.Fatal(err)
		}
		for owner, want := range map[string][]string{"ada": {"morning"}, "bob": {"bobs"}, "": {"bobs", "morning"}} {
			cs, err := s.Classes(ctx, owner)
			var names []string
			for _, c := range cs {
				names = append(names, c.Name)
			}
			if err != nil || !reflect.DeepEqual(names, want) {
				t.Errorf("classes of %q: got %v, %v; want %v", owner, names, err, want)
			}
		}
	})
}

func TestMembers(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		c := newClass(t, s, "morning", "ABCDEFGHJK") // capacity 2
		add := func(id, name string) error {
			return s.AddMember(ctx, c, &Member{ID: id, Name: name, RejoinHash: "h-" + id})
		}
		if err := add("l1", "Alice"); err != nil {
			t.Fatal(err)
		}
		if err := add("l2", "alice"); !errors.Is(err, ErrExists) {
			t.Errorf("display name taken in another case: got %v, want ErrExists", err)
		}
		if err := add("l2", "Bob"); err != nil {
			t.Fatal(err)
		}
		if err := add("l3", "Carol"); !errors.Is(err, ErrFull) {
			t.Errorf("third member of a class of 2: got %v, want ErrFull", err)
		}
		stale := *c
		c.Capacity = 3
		if err := s.UpdateClass(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := s.AddMember(ctx, &stale, &Member{ID: "l3", Name: "Carol", RejoinHash: "h-l3"}); !errors.Is(err, ErrConflict) {
			t.Errorf("join with a class read before an edit: got %v, want ErrConflict", err)
		}
		if err := add("l3", "Carol"); err != nil {
			t.Fatal(err)
		}
		ms, err := s.Members(ctx, c.ID)
		if err != nil || len(ms) != 3 || ms[0].Name != "Alice" || ms[2].Name != "Carol" {
			t.Errorf("members: got %+v, %v; want Alice, Bob, Carol", ms, err)
		}
		m, err := s.MemberByRejoin(ctx, "h-l2")
		if err != nil || m.ID != "l2" || m.ClassID != c.ID {
			t.Errorf("member by rejoin hash: got %+v, %v; want l2 of %s", m, err, c.ID)
		}
		if _, err := s.MemberByRejoin(ctx, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown rejoin hash: got %v, want ErrNotFound", err)
		}
		counts, err := s.CountMembers(ctx)
		if err != nil || counts[c.ID] != 3 {
			t.Errorf("member counts: got %v, %v; want 3 for %s", counts, err, c.ID)
		}
	})
}

// TestAddMemberRace has more learners join at once than a class has room
// for: exactly its capacity get in.
func TestAddMemberRace(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		c := newClass(t, s, "morning", "ABCDEFGHJK")
		c.Capacity = 5
		if err := s.UpdateClass(ctx, c); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 12)
		for i := range errs {
			wg.Go(func() {
				cc := *c
				errs[i] = s.AddMember(ctx, &cc, &Member{ID: fmt.Sprint("l", i), Name: fmt.Sprint("learner ", i), RejoinHash: fmt.Sprint("h", i)})
			})
		}
		wg.Wait()
		in, full := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				in++
			case errors.Is(err, ErrFull):
				full++
			default:
				t.Errorf("join: %v", err)
			}
		}
		if in != 5 || full != 7 {
			t.Errorf("12 joins to a class of 5: got %d in and %d full, want 5 and 7", in, full)
		}
	})
}

func TestClassSessions(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		ca := newClass(t, s, "a", "AAAAAAAAAA")
		cb := newClass(t, s, "b", "BBBBBBBBBB")
		for _, sess := range []*Session{newSession("s1", "l1", "failover", "ready"), newSession("s2", "l2", "failover", "completed"), newSession("s3", "l3", "rbac", "ready")} {
			if err := s.CreateSession(ctx, sess, &Event{Kind: "state"}, &Event{Kind: "hint"}, &Event{Kind: "check"}); err != nil {
				t.Fatal(err)
			}
		}
		for _, l := range []struct{ sess, class string }{{"s1", ca.ID}, {"s2", ca.ID}, {"s3", cb.ID}, {"s1", ca.ID}} {
			if err := s.LinkSession(ctx, l.sess, l.class); err != nil {
				t.Fatalf("link %s to %s: %v", l.sess, l.class, err)
			}
		}
		if err := s.LinkSession(ctx, "s1", cb.ID); !errors.Is(err, ErrExists) {
			t.Errorf("link to a second class: got %v, want ErrExists", err)
		}
		if err := s.LinkSession(ctx, "ghost", ca.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("link of an unknown session: got %v, want ErrNotFound", err)
		}
		if id, err := s.SessionClass(ctx, "s3"); err != nil || id != cb.ID {
			t.Errorf("class of s3: got %q, %v; want %s", id, err, cb.ID)
		}
		got, err := s.ClassSessions(ctx, ca.ID)
		if err != nil || len(got) != 2 || got[0].ID != "s1" || got[1].ID != "s2" {
			t.Errorf("sessions of a: got %+v, %v; want s1, s2", got, err)
		}
		counts, err := s.CountSessions(ctx)
		if err != nil || !reflect.DeepEqual(counts, map[string]int{"ready": 2, "completed": 1}) {
			t.Errorf("session counts: got %v, %v; want 2 ready, 1 completed", counts, err)
		}
		evs, err := s.EventsOfKind(ctx, "s1", "hint", "check")
		if err != nil || len(evs) != 2 || evs[0].Kind != "hint" || evs[1].Kind != "check" {
			t.Errorf("events of kind hint, check: got %+v, %v", evs, err)
		}
		// A deleted session leaves its class.
		if err := s.DeleteSession(ctx, "s2"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.ClassSessions(ctx, ca.ID); len(got) != 1 {
			t.Errorf("sessions of a after deleting s2: got %d, want 1", len(got))
		}
	})
}

// TestClassWarm: a class's warm sessions per lab are stored, changed and
// emptied with the class.
func TestClassWarm(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		s := b.newStore(t)
		ctx := t.Context()
		c := newClass(t, s, "morning", "ABCDEFGHJK")
		for _, want := range []map[string]int{{"failover": 1, "rbac": 3}, nil} {
			c.Warm = want
			if err := s.UpdateClass(ctx, c); err != nil {
				t.Fatal(err)
			}
			got, err := s.Class(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Warm, want) {
				t.Errorf("warm: got %v, want %v", got.Warm, want)
			}
		}
	})
}
