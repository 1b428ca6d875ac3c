package app

import (
	"errors"
	"slices"
	"testing"

	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

func labIDs(labs []session.LabEntry) []string {
	var out []string
	for _, l := range labs {
		out = append(out, l.ID)
	}
	return out
}

// TestClassMembersLabs: a class member sees their class's labs in the
// class's order and may start only those, while the class is open; the
// session is linked to the class as soon as it is recorded (here a start
// that fails for want of binaries); the local learner sees and starts
// every lab, outside any class.
func TestClassMembersLabs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a, err := Open(ctx, Config{DataDir: t.TempDir(), BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// The store gets a hash directly: argon2id costs 64 MiB a hash and is
	// tested in internal/class.
	if err := a.store.CreateInstructor(ctx, &store.Instructor{Name: "ada", PasswordHash: "$argon2id$unused"}); err != nil {
		t.Fatal(err)
	}
	c, err := a.classes.Create(ctx, class.LocalAdmin(), class.Spec{Name: "morning", Labs: []string{"rbac", "failover"}})
	if err != nil {
		t.Fatal(err)
	}
	alice, err := a.classes.Join(ctx, "10.0.0.1", c.JoinCode, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	bob, err := a.classes.Join(ctx, "10.0.0.2", c.JoinCode, "Bob")
	if err != nil {
		t.Fatal(err)
	}

	labs, err := a.Catalogue(ctx, alice.Learner, locale.En)
	if got, want := labIDs(labs), []string{"rbac", "failover"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("a member's catalogue: got %v, %v; want %v", got, err, want)
	}
	labs, err = a.Catalogue(ctx, LocalLearner, locale.En)
	if err != nil || len(labs) != len(a.course.Labs()) {
		t.Errorf("the local learner's catalogue: got %v, %v; want all %d labs", labIDs(labs), err, len(a.course.Labs()))
	}

	if _, err := a.Start(ctx, session.StartOptions{Learner: alice.Learner, Lab: "quota"}, nil); !errors.Is(err, class.ErrNotInClass) {
		t.Errorf("start a lab the class does not run: got %v, want ErrNotInClass", err)
	}
	if ss, _ := a.sessions.Sessions(ctx, alice.Learner); len(ss) != 0 {
		t.Errorf("after a refused start: got sessions %v, want none recorded", ss)
	}
	// No binaries: the start fails after the session is recorded.
	if _, err := a.Start(ctx, session.StartOptions{Learner: alice.Learner, Lab: "rbac"}, nil); err == nil {
		t.Fatal("start without binaries: got nil error")
	}
	if _, err := a.Start(ctx, session.StartOptions{Learner: LocalLearner, Lab: "quota"}, nil); err == nil || errors.Is(err, class.ErrNotInClass) {
		t.Fatalf("the local learner's start: got %v, want it tried (and failed for want of binaries)", err)
	}
	linked, err := a.store.ClassSessions(ctx, c.ID)
	if err != nil || len(linked) != 1 || linked[0].Learner != alice.Learner || linked[0].Lab != "rbac" {
		t.Errorf("the class's sessions: got %+v, %v; want Alice's rbac session only", linked, err)
	}
	if ss, _ := a.sessions.Sessions(ctx, bob.Learner); len(ss) != 0 {
		t.Errorf("Bob's sessions: got %v, want none (Alice's are hers)", ss)
	}

	if _, err := a.classes.Close(ctx, class.LocalAdmin(), "morning"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Start(ctx, session.StartOptions{Learner: bob.Learner, Lab: "rbac"}, nil); !errors.Is(err, class.ErrClosed) {
		t.Errorf("start in a closed class: got %v, want ErrClosed", err)
	}
	labs, err = a.Catalogue(ctx, bob.Learner, locale.En)
	if got, want := labIDs(labs), []string{"rbac", "failover"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("a closed class's catalogue: got %v, %v; want %v still listed", got, err, want)
	}
}
