package class

import (
	"errors"
	"testing"

	"oplab.dev/oplab/internal/store"
)

// TestSignInsWithdrawn: each way a sign-in is withdrawn takes effect on
// the next check, a sign-in made before it included; the others' stay.
func TestSignInsWithdrawn(t *testing.T) {
	t.Parallel()
	f, _ := newLimitFixture(t, Options{})
	ctx := t.Context()
	admin := LocalAdmin()
	morning := f.create(t, ada, Spec{Name: "morning"})
	evening := f.create(t, ada, Spec{Name: "evening"})
	alice, err := f.svc.Join(ctx, "10.0.0.1", morning.JoinCode, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	eve, err := f.svc.Join(ctx, "10.0.0.1", evening.JoinCode, "Eve")
	if err != nil {
		t.Fatal(err)
	}
	signIn := func(learner string) string {
		t.Helper()
		si, err := f.svc.SignInLearner(ctx, learner)
		if err != nil || si.ID == "" || si.Learner != learner {
			t.Fatalf("sign in %s: got %+v, %v", learner, si, err)
		}
		return si.ID
	}
	grace := func() string {
		t.Helper()
		si, err := f.svc.SignInInstructor(ctx, Attempt{Client: "10.0.0.9", Name: "grace", Password: "grace's password"})
		if err != nil {
			t.Fatalf("grace signs in: %v", err)
		}
		return si.ID
	}
	for _, tt := range []struct {
		name     string
		signIn   func() string
		withdraw func(id string) error
		// stays is a sign-in the withdrawal must leave alone.
		stays func() string
	}{
		{"sign-out",
			func() string { return signIn("local") },
			func(id string) error { return f.svc.SignOut(ctx, id) },
			func() string { return signIn("local") }},
		{"class closed",
			func() string { return signIn(alice.Learner) },
			func(string) error { _, err := f.svc.Close(ctx, ada, "morning"); return err },
			func() string { return signIn(eve.Learner) }},
		{"instructor removed",
			grace,
			func(string) error { return f.svc.RemoveInstructor(ctx, admin, "grace") },
			func() string { return signIn("local") }},
	} {
		id, other := tt.signIn(), tt.stays()
		if _, err := f.svc.SignedIn(ctx, id); err != nil {
			t.Fatalf("%s: before: %v", tt.name, err)
		}
		if err := tt.withdraw(id); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if si, err := f.svc.SignedIn(ctx, id); !errors.Is(err, ErrSignedOut) {
			t.Errorf("%s: the sign-in made before: got %+v, %v; want ErrSignedOut", tt.name, si, err)
		}
		if _, err := f.svc.SignedIn(ctx, other); err != nil {
			t.Errorf("%s: another sign-in: got %v, want it kept", tt.name, err)
		}
	}
	// Reopening the class lets its learners rejoin, not back in on the
	// old sign-in.
	old := signIn(eve.Learner)
	if _, err := f.svc.Close(ctx, ada, "evening"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Edit(ctx, ada, "evening", Changes{Reopen: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.SignedIn(ctx, old); !errors.Is(err, ErrSignedOut) {
		t.Errorf("a sign-in from before the class closed, after it reopened: got %v, want ErrSignedOut", err)
	}
	if _, err := f.svc.SignedIn(ctx, signIn(eve.Learner)); err != nil {
		t.Errorf("a sign-in after the class reopened: %v", err)
	}
	// A sign-in made in the moment the class closes is refused all the
	// same: the check reads the class.
	late := signIn(eve.Learner)
	c, _ := f.store.ClassByName(ctx, "evening")
	c.Closed = true
	if err := f.store.UpdateClass(ctx, &c); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.SignedIn(ctx, late); !errors.Is(err, ErrSignedOut) {
		t.Errorf("a sign-in of a class closed behind the service's back: got %v, want ErrSignedOut", err)
	}

	// Expiry, and secrets that were never issued.
	id := signIn("local")
	f.clock.add(DefaultSignInTTL)
	if _, err := f.svc.SignedIn(ctx, id); !errors.Is(err, ErrSignedOut) {
		t.Errorf("after %s: got %v, want ErrSignedOut", DefaultSignInTTL, err)
	}
	for _, bad := range []string{"", "guess", string(make([]byte, 4096))} {
		if _, err := f.svc.SignedIn(ctx, bad); !errors.Is(err, ErrSignedOut) {
			t.Errorf("SignedIn(%.10q): got %v, want ErrSignedOut", bad, err)
		}
	}
}

// TestAdminReadFromTheStore: whether an instructor is an admin is what
// the store says at each check, not what it said at sign-in.
func TestAdminReadFromTheStore(t *testing.T) {
	t.Parallel()
	f, _ := newLimitFixture(t, Options{})
	ctx := t.Context()
	si, err := f.svc.SignInInstructor(ctx, Attempt{Client: "10.0.0.9", Name: "grace", Password: "grace's password"})
	if err != nil || si.Admin {
		t.Fatalf("sign in: got %+v, %v; want grace, no admin", si, err)
	}
	for _, admin := range []bool{true, false} {
		in, err := f.store.Instructor(ctx, "grace")
		if err != nil {
			t.Fatal(err)
		}
		in.Admin = admin
		if err := f.store.UpdateInstructor(ctx, &in); err != nil {
			t.Fatal(err)
		}
		got, err := f.svc.SignedIn(ctx, si.ID)
		if err != nil || got.Instructor != "grace" || got.Admin != admin {
			t.Errorf("after setting admin=%v in the store: got %+v, %v", admin, got, err)
		}
	}
}

// TestRemoveInstructor: only an admin removes an instructor, and not one
// who still runs classes.
func TestRemoveInstructor(t *testing.T) {
	t.Parallel()
	f, _ := newLimitFixture(t, Options{})
	ctx := t.Context()
	f.create(t, ada, Spec{Name: "morning"})
	for _, tt := range []struct {
		name string
		by   Actor
		want error
	}{
		{"grace", ada, ErrForbidden},
		{"ada", LocalAdmin(), ErrInvalid},
		{"nobody", LocalAdmin(), ErrNotFound},
		{"grace", LocalAdmin(), nil},
	} {
		if err := f.svc.RemoveInstructor(ctx, tt.by, tt.name); !errors.Is(err, tt.want) {
			t.Errorf("remove %s by %+v: got %v, want %v", tt.name, tt.by, err, tt.want)
		}
	}
	if _, err := f.store.Instructor(ctx, "grace"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("grace after removal: got %v, want ErrNotFound", err)
	}
	if _, err := f.svc.Verify(ctx, "10.0.0.9", "grace", "grace's password"); !errors.Is(err, ErrBadCredentials) {
		t.Errorf("grace signs in after removal: got %v, want ErrBadCredentials", err)
	}
}

// BenchmarkSignedIn measures the check every signed-in request makes: a
// class member's sign-in, read with their membership and class from a
// SQLite file.
func BenchmarkSignedIn(b *testing.B) {
	f := newFixture(b, Options{})
	ctx := b.Context()
	c, err := f.svc.Create(ctx, ada, Spec{Name: "bench", Labs: []string{"failover"}})
	if err != nil {
		b.Fatal(err)
	}
	j, err := f.svc.Join(ctx, "10.0.0.1", c.JoinCode, "Alice")
	if err != nil {
		b.Fatal(err)
	}
	si, err := f.svc.SignInLearner(ctx, j.Learner)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := f.svc.SignedIn(ctx, si.ID); err != nil {
			b.Fatal(err)
		}
	}
}
