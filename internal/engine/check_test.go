package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pgv1 "oplab.dev/oplab/api/v1"
)

func TestPoll(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		results []bool // results of successive evaluations; the last repeats
		need    int
		held    bool // the passes in a row were seen before
		want    bool
		polls   int
		reason  string
	}{
		{"passes at once", []bool{true}, 1, false, true, 1, "r1"},
		{"needs consecutive passes", []bool{true, false, true, true, true}, 3, false, true, 5, "r5"},
		{"too few passes within the budget", []bool{false, true}, 1000, false, false, 0, "not yet stable"},
		{"never passes", []bool{false}, 1, false, false, 0, "r"},
		{"held: one pass is enough", []bool{true}, 3, true, true, 1, "r1"},
		{"held, but failing first: a whole run again", []bool{false, true, true, false, true, true, true}, 3, true, true, 7, "r7"},
		{"held, never passes", []bool{false}, 3, true, false, 0, "r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := 0
			fn := func(context.Context) (bool, string) {
				i := min(n, len(tt.results)-1)
				n++
				if tt.results[i] {
					return true, "r" + string(rune('0'+n))
				}
				return false, "r" + string(rune('0'+n))
			}
			// A budget a loaded machine cannot overrun by oversleeping: the
			// failing cases must still poll at least 10 times within it.
			ok, why, polls := poll(context.Background(), fn, 2*time.Second, 10*time.Millisecond, tt.need, tt.held)
			if ok != tt.want {
				t.Errorf("got passed %v, want %v (reason %q)", ok, tt.want, why)
			}
			if tt.polls > 0 && polls != tt.polls {
				t.Errorf("got %d polls, want %d", polls, tt.polls)
			}
			if !tt.want && polls < 10 {
				t.Errorf("a failing check gave up after %d polls, want it to use its budget", polls)
			}
			if !strings.Contains(why, tt.reason) && !strings.HasPrefix(why, tt.reason) {
				t.Errorf("got reason %q, want it to contain %q", why, tt.reason)
			}
		})
	}
}

func TestConditionMatches(t *testing.T) {
	t.Parallel()
	pgc := &pgv1.PostgresCluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: 3}}
	pgc.Status.Conditions = []metav1.Condition{
		{Type: "Ready", Status: "False", Reason: "QuotaExceeded", Message: "exceeded quota", ObservedGeneration: 3},
		{Type: "PrimaryAvailable", Status: "True", Reason: "PrimaryReady", ObservedGeneration: 2},
	}
	tests := []struct {
		typ, status, reason string
		want                bool
		why                 string
	}{
		{"Ready", "False", "", true, "db is Ready False (QuotaExceeded: exceeded quota)"},
		{"Ready", "False", "QuotaExceeded", true, ""},
		{"Ready", "False", "StorageClassNotFound", false, "want False (StorageClassNotFound)"},
		{"Ready", "True", "", false, "want True"},
		{"PrimaryAvailable", "True", "", false, "older generation"},
		{"Progressing", "True", "", false, "no Progressing condition"},
	}
	for _, tt := range tests {
		ok, why := conditionMatches(pgc, tt.typ, tt.status, tt.reason)
		if ok != tt.want || !strings.Contains(why, tt.why) {
			t.Errorf("%s=%s (%s): got %v %q, want %v and a reason containing %q", tt.typ, tt.status, tt.reason, ok, why, tt.want, tt.why)
		}
	}
}
