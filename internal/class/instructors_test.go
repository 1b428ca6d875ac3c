package class

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"oplab.dev/oplab/internal/store"
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

// fakeHasher stands in for argon2id in tests of the limits: it counts the
// hashes, the most that ran at once, and takes a little time.
type fakeHasher struct {
	mu               sync.Mutex
	running, peak, n int
}

func (h *fakeHasher) check(encoded, password string) (bool, error) {
	h.mu.Lock()
	h.running++
	h.n++
	h.peak = max(h.peak, h.running)
	h.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	h.mu.Lock()
	h.running--
	h.mu.Unlock()
	return encoded == "$fake$"+password, nil
}

func (h *fakeHasher) counts() (n, peak int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n, h.peak
}

// newLimitFixture is a fixture whose instructor grace has the password
// "grace's password" under a fake hash.
func newLimitFixture(t *testing.T, o Options) (*fixture, *fakeHasher) {
	t.Helper()
	f := newFixture(t, o)
	h := &fakeHasher{}
	f.svc.check = h.check
	if err := f.store.CreateInstructor(t.Context(), &store.Instructor{Name: "grace", PasswordHash: "$fake$grace's password"}); err != nil {
		t.Fatal(err)
	}
	return f, h
}

// TestAttemptsCountedBeforeHashing: 200 wrong passwords sent at once from
// 10 addresses are counted as they arrive: no address gets more hashes
// than its allowance, no more hashes run at once than the gate's slot,
// and the rest are refused with a wait, without hashing.
func TestAttemptsCountedBeforeHashing(t *testing.T) {
	t.Parallel()
	f, h := newLimitFixture(t, Options{FailureBurst: 3, FailureEvery: time.Hour, HashSlots: 1, HashQueue: 4, HashWait: time.Minute})
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	for i := range 200 {
		wg.Go(func() {
			name := []string{"grace", fmt.Sprint("nobody", i)}[i%2]
			_, err := f.svc.Verify(t.Context(), fmt.Sprint("10.0.0.", i%10), name, "a wrong guess")
			var wait *WaitError
			kind := "other: " + fmt.Sprint(err)
			switch {
			case errors.Is(err, ErrBadCredentials):
				kind = "wrong"
			case errors.As(err, &wait) && wait.Wait > 0:
				kind = "wait"
			}
			mu.Lock()
			got[kind]++
			mu.Unlock()
		})
	}
	wg.Wait()
	n, peak := h.counts()
	if peak != 1 {
		t.Errorf("hashes at once: got %d, want 1 (the gate's one slot)", peak)
	}
	if n != got["wrong"] || n > 10*3 || got["wrong"]+got["wait"] != 200 {
		t.Errorf("200 attempts: got %v and %d hashes; want only wrong and wait, at most 30 hashed (10 addresses × 3), one hash per wrong", got, n)
	}
}

// TestNameLimitAndTrustedBrowser: wrong passwords on a name from many
// addresses use up the name's attempts, and then the right password from
// a fresh address is refused without hashing; from a browser that signed
// in as that name before (Device), it gets in. A device proof for another
// name counts for nothing.
func TestNameLimitAndTrustedBrowser(t *testing.T) {
	t.Parallel()
	f, h := newLimitFixture(t, Options{FailureBurst: 3, FailureEvery: time.Hour})
	ctx := t.Context()
	for i := range 3 {
		if _, err := f.svc.Verify(ctx, fmt.Sprint("10.0.1.", i), "grace", "guess"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("guess %d: got %v, want ErrBadCredentials", i, err)
		}
	}
	before, _ := h.counts()
	for _, tt := range []struct {
		step string
		at   Attempt
		want error
	}{
		{"fresh address, right password", Attempt{Client: "10.0.2.1", Name: "grace", Password: "grace's password"}, ErrTooManyAttempts},
		{"device proof for another name", Attempt{Client: "10.0.2.1", Name: "grace", Password: "grace's password", Device: "ada"}, ErrTooManyAttempts},
		{"another name from a guessing address", Attempt{Client: "10.0.1.0", Name: "ada", Password: "x"}, ErrBadCredentials},
	} {
		if _, err := f.svc.SignInInstructor(ctx, tt.at); !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.step, err, tt.want)
		}
	}
	if after, _ := h.counts(); after != before+1 {
		t.Errorf("hashes for the refused attempts: got %d, want only ada's (1)", after-before)
	}
	si, err := f.svc.SignInInstructor(ctx, Attempt{Client: "10.0.2.1", Name: "grace", Password: "grace's password", Device: "grace"})
	if err != nil || si.Instructor != "grace" || si.ID == "" {
		t.Fatalf("from grace's own browser: got %+v, %v; want signed in", si, err)
	}
	// Her own browser has its own allowance: her typos there count
	// against it, not against the name.
	for range 3 {
		f.svc.SignInInstructor(ctx, Attempt{Client: "10.0.2.1", Name: "grace", Password: "typo", Device: "grace"})
	}
	if _, err := f.svc.SignInInstructor(ctx, Attempt{Client: "10.0.2.1", Name: "grace", Password: "grace's password", Device: "grace"}); !errors.Is(err, ErrTooManyAttempts) {
		t.Errorf("after 3 typos in her browser: got %v, want ErrTooManyAttempts", err)
	}
}
