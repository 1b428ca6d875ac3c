package webapp

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/server"
)

// TestClassroomReachesTheServer: on a real store, an instructor's
// password signs them in and a wrong one is ErrBadCredentials; an
// instructor sees their class's board and not another's (ErrForbidden),
// an admin sees both; a session outside the class is ErrNotFound.
func TestClassroomReachesTheServer(t *testing.T) {
	ctx := t.Context()
	a, err := app.Open(ctx, app.Config{DataDir: t.TempDir(), BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	w, err := New(ctx, a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, n := range []string{"ada", "bob"} {
		if _, err := a.AddInstructor(ctx, n, "correct horse battery", false); err != nil {
			t.Fatal(err)
		}
	}
	c, err := a.CreateClass(ctx, class.Actor{Name: "ada"}, class.Spec{Name: "morning", Labs: []string{"failover"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Join(ctx, "10.0.0.1", c.JoinCode, "Alice"); err != nil {
		t.Fatal(err)
	}

	if _, err := w.SignInInstructor(ctx, server.Credentials{Client: "10.0.0.9", Name: "ada", Password: "wrong password!"}); !errors.Is(err, server.ErrBadCredentials) {
		t.Errorf("wrong password: got %v, want ErrBadCredentials", err)
	}
	si, err := w.SignInInstructor(ctx, server.Credentials{Client: "10.0.0.9", Name: "ada", Password: "correct horse battery"})
	if err != nil || si.Instructor != "ada" || si.Admin || si.ID == "" {
		t.Fatalf("sign in: got %+v, %v; want ada, no admin", si, err)
	}
	if got, err := w.SignedIn(ctx, si.ID); err != nil || got.Instructor != "ada" {
		t.Errorf("the sign-in's record: got %+v, %v; want ada's", got, err)
	}
	if err := w.SignOut(ctx, si.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.SignedIn(ctx, si.ID); !errors.Is(err, server.ErrSignedOut) {
		t.Errorf("after sign-out: got %v, want server.ErrSignedOut", err)
	}
	ada := &server.Instructor{Name: si.Instructor, Admin: si.Admin}
	b, err := w.Board(ctx, *ada, "morning", "en")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Rows) != 1 || b.Rows[0].Name != "Alice" || len(b.Rows[0].Cells) != len(b.Columns) || len(b.Columns) == 0 {
		t.Errorf("board: got %+v, want Alice's row with a cell per exercise", b)
	}
	bob := server.Instructor{Name: "bob"}
	for what, err := range map[string]error{
		"board":  func() error { _, err := w.Board(ctx, bob, "morning", "en"); return err }(),
		"close":  w.CloseClass(ctx, bob, "morning"),
		"export": w.Export(ctx, bob, "morning", &bytes.Buffer{}),
		"end":    func() error { _, err := w.EndLearner(ctx, bob, "morning", "any", nil); return err }(),
	} {
		if !errors.Is(err, server.ErrForbidden) {
			t.Errorf("bob's %s of ada's class: got %v, want ErrForbidden", what, err)
		}
	}
	if _, err := w.ClassSession(ctx, *ada, "morning", "not-in-class"); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("a session outside the class: got %v, want ErrNotFound", err)
	}
	var csv bytes.Buffer
	if err := w.Export(ctx, server.Instructor{Name: "root", Admin: true}, "morning", &csv); err != nil || !strings.Contains(csv.String(), "Alice") {
		t.Errorf("an admin's export: got %q, %v; want Alice's rows", csv.String(), err)
	}
	if err := w.CloseClass(ctx, *ada, "morning"); err != nil {
		t.Fatal(err)
	}
	if cs, err := w.Classes(ctx, *ada); err != nil || len(cs) != 1 || cs[0].State != class.StateClosed {
		t.Errorf("ada's classes after closing: got %+v, %v", cs, err)
	}
}
