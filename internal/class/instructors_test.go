package class

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestPasswordHash(t *testing.T) {
	t.Parallel()
	h1, err := hashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := hashPassword("correct horse battery")
	if !strings.HasPrefix(h1, "$argon2id$v=19$m=65536,t=3,p=2$") || h1 == h2 {
		t.Errorf("hashes: got %q and %q, want argon2id PHC strings with different salts", h1, h2)
	}
	for _, tt := range []struct {
		hash, password string
		want           bool
	}{
		{h1, "correct horse battery", true},
		{h2, "correct horse battery", true},
		{h1, "correct horse batterY", false},
		{h1, "", false},
	} {
		if got, err := checkPassword(tt.hash, tt.password); err != nil || got != tt.want {
			t.Errorf("check %q: got %v, %v; want %v", tt.password, got, err, tt.want)
		}
	}
	// A hash made with other parameters (a stronger default later) is
	// still checked with its own.
	old := "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$" // RFC-style parameters
	if _, err := checkPassword(old+"AAAA", "x"); !errors.Is(err, errBadHash) {
		t.Errorf("short key: got %v, want errBadHash", err)
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=65536,t=3,p=2$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		"$argon2id$v=19$m=4194304,t=3,p=2$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5", "$argon2id$v=16$m=65536,t=3,p=2$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5"} {
		if _, err := checkPassword(bad, "x"); !errors.Is(err, errBadHash) {
			t.Errorf("check against %q: got %v, want errBadHash", bad, err)
		}
	}
}

func TestInstructors(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := t.Context()
	const password = "s3cret-enough-for-class"
	in, err := f.svc.AddInstructor(ctx, "grace", password, true)
	if err != nil || in.Name != "grace" || !in.Admin {
		t.Fatalf("add: got %+v, %v", in, err)
	}
	for _, tt := range []struct {
		name, password string
		want           error
	}{
		{"grace", password, ErrExists},
		{"linus", "short", ErrInvalid},
		{"bad name", password, ErrInvalid},
	} {
		if _, err := f.svc.AddInstructor(ctx, tt.name, tt.password, false); !errors.Is(err, tt.want) {
			t.Errorf("add %q: got %v, want %v", tt.name, err, tt.want)
		}
	}
	got, err := f.svc.Verify(ctx, "10.0.0.1", "grace", password)
	if err != nil || got.Name != "grace" || !got.Admin || got.Actor() != (Actor{Name: "grace", Admin: true}) {
		t.Errorf("verify: got %+v, %v; want grace, admin", got, err)
	}
	for _, tt := range []struct{ name, password string }{{"grace", password + "x"}, {"grace", ""}, {"nobody", password}} {
		if _, err := f.svc.Verify(ctx, "10.0.0.1", tt.name, tt.password); !errors.Is(err, ErrBadCredentials) {
			t.Errorf("verify %s with a wrong password: got %v, want ErrBadCredentials", tt.name, err)
		}
	}
	// The fixture allows 10 wrong attempts: 7 more, and the right
	// password is refused too, from that client only.
	for range 7 {
		if _, err := f.svc.Verify(ctx, "10.0.0.1", "grace", "guess"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("wrong password: got %v, want ErrBadCredentials", err)
		}
	}
	if _, err := f.svc.Verify(ctx, "10.0.0.1", "grace", password); !errors.Is(err, ErrTooManyAttempts) {
		t.Errorf("right password after 10 wrong ones: got %v, want ErrTooManyAttempts", err)
	}
	if _, err := f.svc.Join(ctx, "10.0.0.1", "WRONG", "x"); !errors.Is(err, ErrBadCode) {
		t.Errorf("a learner's join from the same address: got %v, want only ErrBadCode", err)
	}
	if _, err := f.svc.Verify(ctx, "10.0.0.2", "grace", password); err != nil {
		t.Errorf("right password from another client: %v", err)
	}
	all, err := f.svc.Instructors(ctx)
	if err != nil || len(all) != 3 || all[2].Name != "grace" {
		t.Errorf("instructors: got %+v, %v; want ada, bob, grace", all, err)
	}
	// The password is nowhere in the store's file.
	f.store.Close()
	for _, p := range []string{f.path, f.path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(password)) {
			t.Errorf("%s holds the password in clear", p)
		}
	}
}
