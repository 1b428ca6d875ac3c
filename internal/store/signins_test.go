package store

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestSignIns: a sign-in's state follows its member, class and instructor
// as they are now; sign-outs, a class's sign-outs and an instructor's
// removal forget rows; the table keeps a bounded number per person.
func TestSignIns(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		s := b.newStore(t)
		c := newClass(t, s, "morning", "ABCDEFGHJK")
		newInstructor(t, s, "bob")
		if err := s.AddMember(ctx, c, &Member{ID: "learner-a", Name: "Alice", RejoinHash: "h-a"}); err != nil {
			t.Fatal(err)
		}
		now := time.Now().UTC()
		later := now.Add(time.Hour)
		for _, si := range []*SignIn{
			{ID: "s-alice", Learner: "learner-a", ClassID: c.ID, Expires: later},
			{ID: "s-local", Learner: "local", Expires: later},
			{ID: "s-ada", Instructor: "ada", Expires: later},
			{ID: "s-bob", Instructor: "bob", Expires: later},
		} {
			if err := s.CreateSignIn(ctx, si, 5); err != nil {
				t.Fatal(err)
			}
		}
		for _, bad := range []*SignIn{{ID: "x", Expires: later}, {ID: "x", Learner: "l", Instructor: "i", Expires: later}, {ID: "x", Learner: "l"}} {
			if err := s.CreateSignIn(ctx, bad, 5); err == nil {
				t.Errorf("create %+v: got no error, want one", bad)
			}
		}
		state := func(id string) string {
			st, err := s.SignInState(ctx, id)
			if err != nil {
				return err.Error()
			}
			return fmt.Sprintf("member=%v closed=%v instructor=%v admin=%v", st.Member, st.ClassClosed, st.Instructor, st.Admin)
		}
		for _, tt := range []struct{ id, want string }{
			{"s-alice", "member=true closed=false instructor=false admin=false"},
			{"s-local", "member=false closed=false instructor=false admin=false"},
			{"s-ada", "member=false closed=false instructor=true admin=false"},
			{"nobody", "sign-in: not found"},
		} {
			if got := state(tt.id); got != tt.want {
				t.Errorf("state of %s: got %q, want %q", tt.id, got, tt.want)
			}
		}

		// Admin is read from the instructor's row as it is now.
		ada, _ := s.Instructor(ctx, "ada")
		ada.Admin = true
		if err := s.UpdateInstructor(ctx, &ada); err != nil {
			t.Fatal(err)
		}
		if got, want := state("s-ada"), "member=false closed=false instructor=true admin=true"; got != want {
			t.Errorf("state of s-ada after promotion: got %q, want %q", got, want)
		}
		// A closed class shows on its learners' sign-ins; the class's
		// sign-outs forget them.
		c.Closed = true
		if err := s.UpdateClass(ctx, c); err != nil {
			t.Fatal(err)
		}
		if got, want := state("s-alice"), "member=true closed=true instructor=false admin=false"; got != want {
			t.Errorf("state of s-alice in a closed class: got %q, want %q", got, want)
		}
		if n, err := s.DeleteClassSignIns(ctx, c.ID); err != nil || n != 1 {
			t.Errorf("delete the class's sign-ins: got %d, %v; want 1", n, err)
		}
		if _, err := s.SignInState(ctx, "s-alice"); !errors.Is(err, ErrNotFound) {
			t.Errorf("s-alice after the class's sign-outs: got %v, want ErrNotFound", err)
		}
		if err := s.DeleteSignIn(ctx, "s-local"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SignInState(ctx, "s-local"); !errors.Is(err, ErrNotFound) {
			t.Errorf("s-local after sign-out: got %v, want ErrNotFound", err)
		}
		// An instructor who owns a class cannot be removed; one who owns
		// none goes with their sign-ins.
		if err := s.DeleteInstructor(ctx, "ada"); !errors.Is(err, ErrConflict) {
			t.Errorf("delete ada, who owns morning: got %v, want ErrConflict", err)
		}
		if err := s.DeleteInstructor(ctx, "bob"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SignInState(ctx, "s-bob"); !errors.Is(err, ErrNotFound) {
			t.Errorf("s-bob after bob's removal: got %v, want ErrNotFound", err)
		}
		if err := s.DeleteInstructor(ctx, "bob"); !errors.Is(err, ErrNotFound) {
			t.Errorf("delete bob again: got %v, want ErrNotFound", err)
		}

		// Bounded: only the newest keep sign-ins of one person stay, and
		// expired ones go.
		for i := range 8 {
			si := &SignIn{ID: fmt.Sprint("many-", i), Learner: "local", Created: now.Add(time.Duration(i) * time.Second), Expires: later}
			if err := s.CreateSignIn(ctx, si, 3); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 8 {
			_, err := s.SignInState(ctx, fmt.Sprint("many-", i))
			if kept := i >= 5; kept != (err == nil) {
				t.Errorf("sign-in many-%d: got %v, want kept=%v (the newest 3)", i, err, kept)
			}
		}
		if err := s.CreateSignIn(ctx, &SignIn{ID: "fresh", Learner: "x", Created: later.Add(time.Second), Expires: later.Add(time.Hour)}, 3); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SignInState(ctx, "many-7"); !errors.Is(err, ErrNotFound) {
			t.Errorf("an expired sign-in after the next sign-in: got %v, want it forgotten", err)
		}
	})
}
