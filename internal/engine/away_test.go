package engine

import (
	"testing"
	"time"
)

// TestRecoveryLeavesOutTimeAway: the time a session slept between the
// fault and the recovery is not the learner's.
func TestRecoveryLeavesOutTimeAway(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for _, tt := range []struct {
		name string
		away []Span
		want time.Duration
	}{
		{"never away", nil, 10 * time.Minute},
		{"away inside", []Span{{at(2 * time.Minute), at(7 * time.Minute)}}, 5 * time.Minute},
		{"two spans", []Span{{at(time.Minute), at(2 * time.Minute)}, {at(3 * time.Minute), at(5 * time.Minute)}}, 7 * time.Minute},
		{"away before the fault", []Span{{at(-time.Hour), at(time.Minute)}}, 9 * time.Minute},
		{"away after the recovery", []Span{{at(9 * time.Minute), at(time.Hour)}}, 9 * time.Minute},
		{"away outside", []Span{{at(-time.Hour), at(-time.Minute)}, {at(time.Hour), at(2 * time.Hour)}}, 10 * time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &Attempt{T0: t0, T1: at(10 * time.Minute), Away: tt.away}
			if got := a.Recovery(); got != tt.want {
				t.Errorf("recovery: got %s, want %s", got, tt.want)
			}
		})
	}
	if got := (&Attempt{T0: t0, Away: []Span{{at(time.Minute), at(2 * time.Minute)}}}).Recovery(); got != 0 {
		t.Errorf("recovery before T1: got %s, want 0", got)
	}
}
