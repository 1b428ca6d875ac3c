package class

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	t.Parallel()
	l := newLimiter(2, 10*time.Second, 100)
	now := monday9
	for _, tt := range []struct {
		step     string
		take     bool
		refund   bool
		after    time.Duration
		wantTake time.Duration
		wantWait time.Duration
	}{
		{step: "new client"},
		{step: "one attempt", take: true},
		{step: "two attempts", take: true, wantWait: 10 * time.Second},
		{step: "a third is refused, taking nothing", take: true, wantTake: 10 * time.Second, wantWait: 10 * time.Second},
		{step: "4 s later", after: 4 * time.Second, wantWait: 6 * time.Second},
		{step: "6.5 s later", after: 2500 * time.Millisecond, wantWait: 4 * time.Second}, // 3.5 s, rounded up
		{step: "a token back", after: 4 * time.Second},
		{step: "takes it at once", take: true, wantWait: 10 * time.Second},
		{step: "a success gives it back", refund: true},
		{step: "refunds never exceed the burst", refund: true},
		{step: "so two attempts are left", take: true},
		{step: "and then none", take: true, wantWait: 10 * time.Second},
	} {
		now = now.Add(tt.after)
		if tt.take {
			if got := l.take("c", now); got != tt.wantTake {
				t.Errorf("%s: take: got wait %v, want %v", tt.step, got, tt.wantTake)
			}
		}
		if tt.refund {
			l.refund("c", now)
			l.refund("c", now)
		}
		if got := l.wait("c", now); got != tt.wantWait {
			t.Errorf("%s: wait %v, want %v", tt.step, got, tt.wantWait)
		}
	}
	if got := l.wait("other", now); got != 0 {
		t.Errorf("another client: wait %v, want 0", got)
	}
	// Keys whose allowance is full again are forgotten when the map
	// must make room.
	l.prune(now.Add(time.Minute))
	if len(l.keys) != 0 {
		t.Errorf("after prune: %d keys kept, want 0", len(l.keys))
	}
}

// TestLimiterBounded: a flood of new keys (addresses, names) keeps the
// map under its bound, and keys that are still draining are kept while
// full ones can go.
func TestLimiterBounded(t *testing.T) {
	t.Parallel()
	l := newLimiter(2, time.Minute, 1000)
	now := monday9
	l.take("attacker", now)
	l.take("attacker", now)
	for i := range 10_000 {
		// Each key spends one of its two attempts: none is full again.
		l.take(fmt.Sprint("10.0.", i/256, ".", i%256), now)
		if len(l.keys) > 1000 {
			t.Fatalf("after %d keys: %d held, want at most 1000", i+1, len(l.keys))
		}
	}
	l2 := newLimiter(2, time.Minute, 1000)
	l2.take("attacker", now)
	l2.take("attacker", now)
	for i := range 10_000 {
		// Full again at once: these are pruned, the attacker is not.
		k := fmt.Sprint("k", i)
		l2.take(k, now)
		l2.refund(k, now)
	}
	if got := l2.wait("attacker", now); got != time.Minute {
		t.Errorf("the draining key after a flood of full ones: wait %v, want 1m", got)
	}
}

func TestClientKey(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"10.0.0.1", "10.0.0.1"},
		{"2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:bbbb::7", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"::ffff:10.0.0.1", "::ffff:10.0.0.1"},
		{"not an address", "not an address"},
	} {
		if got := clientKey(tt.in); got != tt.want {
			t.Errorf("clientKey(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCodes(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		c := newCode(joinCodeLen)
		if len(c) != joinCodeLen || seen[c] {
			t.Fatalf("code %q: want %d fresh symbols", c, joinCodeLen)
		}
		seen[c] = true
		for _, r := range c {
			if r == '0' || r == 'O' || r == '1' || r == 'I' || r == 'L' {
				t.Fatalf("code %q holds an ambiguous symbol", c)
			}
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"ABCDEFGHJK", "ABCDE-FGHJK"},
		{"abcd-efgh-jkmn", "ABCD-EFGH-JKMN"},
		{" abcde fghjk ", "ABCDE-FGHJK"},
	} {
		if got := FormatCode(tt.in); got != tt.want {
			t.Errorf("FormatCode(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
	if hashRejoin("abcd-efgh-jkmn") != hashRejoin("ABCDEFGHJKMN") || hashRejoin("ABCDEFGHJKMN") == hashRejoin("ABCDEFGHJKMP") {
		t.Error("rejoin hashes: want equal for one code typed two ways, different for two codes")
	}
}

// BenchmarkJoin measures one learner joining a class on a SQLite file: the
// path 30 learners take at 9:00.
func BenchmarkJoin(b *testing.B) {
	f := newFixture(b, Options{})
	c, err := f.svc.Create(b.Context(), ada, Spec{Name: "bench", Labs: []string{"failover"}})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		if _, err := f.svc.Join(b.Context(), "bench", c.JoinCode, fmt.Sprint("learner ", i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify measures an instructor's sign-in: one argon2id hash.
func BenchmarkVerify(b *testing.B) {
	f := newFixture(b, Options{})
	if _, err := f.svc.AddInstructor(b.Context(), "grace", "long enough password", false); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := f.svc.Verify(b.Context(), "bench", "grace", "long enough password"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEveryWrongCodeCounted: wrong codes sent at once from one address
// (one IPv6 /64) are each counted, however many passed the check
// together: the client then waits until all but the allowance are paid
// back. Right codes sent at once from one address are never refused for
// it (TestJoinAtNine).
func TestEveryWrongCodeCounted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{FailureBurst: 3, FailureEvery: time.Minute})
	f.create(t, ada, Spec{Name: "morning"})
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	for i := range 100 {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				_, err = f.svc.Join(t.Context(), "2001:db8::1", fmt.Sprint("WRONG", i), "x")
			} else {
				// Another address of the same /64.
				_, err = f.svc.Rejoin(t.Context(), "2001:db8::2", fmt.Sprint("WRONG", i))
			}
			kind := fmt.Sprint(err)
			switch {
			case errors.Is(err, ErrBadCode):
				kind = "looked up"
			case errors.Is(err, ErrTooManyAttempts):
				kind = "refused"
			}
			mu.Lock()
			got[kind]++
			mu.Unlock()
		})
	}
	wg.Wait()
	looked := got["looked up"]
	if looked < 3 || looked+got["refused"] != 100 {
		t.Fatalf("100 wrong codes at once from one /64: got %v, want at least 3 looked up, the rest refused", got)
	}
	// Each of them is paid back before the next lookup.
	_, err := f.svc.Join(t.Context(), "2001:db8::3", "WRONG", "x")
	var wait *WaitError
	if want := time.Duration(looked-3+1) * time.Minute; !errors.As(err, &wait) || wait.Wait != want {
		t.Errorf("after %d wrong codes looked up: got %v, want a wait of %s", looked, err, want)
	}
}
