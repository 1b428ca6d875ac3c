package session

import (
	"slices"
	"testing"
	"time"

	"oplab.dev/oplab/internal/engine"
)

// TestActions: a session's view lists the steps it allows now, from the
// same rules the steps enforce, so a page that shows only these never
// offers a step the session would refuse.
func TestActions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	now := time.Now()
	tests := []struct {
		id      string
		state   State
		attempt *engine.Attempt
		want    []Action
	}{
		// failover's first exercise has chaos: first the fault.
		{"ready", Ready, nil, []Action{ActChaos, ActStop}},
		{"faulted", InExercise, &engine.Attempt{Started: now, T0: now}, []Action{ActCheck, ActHint, ActReset, ActStop}},
		// Its fault was never confirmed: only a reset helps.
		{"unconfirmed", InExercise, &engine.Attempt{Started: now}, []Action{ActChaos, ActHint, ActReset, ActStop}},
		{"done", Completed, nil, []Action{}},
		{"gone", Expired, nil, []Action{}},
		{"starting", Provisioning, nil, []Action{ActStop}},
	}
	for _, tt := range tests {
		f.seed(t, tt.id, "failover", tt.state, 0, tt.attempt)
	}
	for _, tt := range tests {
		st, err := f.m.Status(ctx, tt.id)
		if err != nil {
			t.Fatalf("status %s: %v", tt.id, err)
		}
		if !slices.Equal(st.Actions, tt.want) {
			t.Errorf("%s (%s): actions %v, want %v", tt.id, tt.state, st.Actions, tt.want)
		}
		if st.Active != tt.state.Active() {
			t.Errorf("%s: active %v, want %v", tt.id, st.Active, tt.state.Active())
		}
		// What is not listed is refused, with the error the step gives.
		s, err := f.m.load(ctx, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range actionOrder {
			if got := s.refuse(a) == nil; got != slices.Contains(tt.want, a) {
				t.Errorf("%s: refuse(%s) allows %v, but actions list it %v", tt.id, a, got, !got)
			}
		}
	}
}
