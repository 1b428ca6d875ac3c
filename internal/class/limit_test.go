package class

import (
	"fmt"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	t.Parallel()
	l := newLimiter(2, 10*time.Second)
	now := monday9
	for _, tt := range []struct {
		step     string
		fail     bool
		after    time.Duration
		wantWait time.Duration
	}{
		{"new client", false, 0, 0},
		{"one failure", true, 0, 0},
		{"two failures", true, 0, 10 * time.Second},
		{"4 s later", false, 4 * time.Second, 6 * time.Second},
		{"6.5 s later", false, 2500 * time.Millisecond, 4 * time.Second}, // 3.5 s, rounded up
		{"a token back", false, 4 * time.Second, 0},
		{"fails again at once", true, 0, 10 * time.Second},
	} {
		now = now.Add(tt.after)
		if tt.fail {
			l.fail("c", now)
		}
		if got := l.wait("c", now); got != tt.wantWait {
			t.Errorf("%s: wait %v, want %v", tt.step, got, tt.wantWait)
		}
	}
	if got := l.wait("other", now); got != 0 {
		t.Errorf("another client: wait %v, want 0", got)
	}
	// Clients whose allowance is full again are forgotten when the map
	// must make room.
	l.prune(now.Add(time.Minute))
	if len(l.clients) != 0 {
		t.Errorf("after prune: %d clients kept, want 0", len(l.clients))
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
