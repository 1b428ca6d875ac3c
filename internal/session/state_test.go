package session

import (
	"errors"
	"testing"
)

func TestTransitions(t *testing.T) {
	t.Parallel()
	allowed := map[[2]State]bool{
		{Provisioning, Ready}: true, {Provisioning, Failed}: true, {Provisioning, Expired}: true,
		{Ready, Ready}: true, {Ready, InExercise}: true, {Ready, Expired}: true, {Ready, Failed}: true,
		{InExercise, InExercise}: true, {InExercise, Ready}: true, {InExercise, Completed}: true,
		{InExercise, Expired}: true, {InExercise, Failed}: true,
	}
	for _, from := range States() {
		for _, to := range States() {
			want := allowed[[2]State{from, to}]
			t.Run(string(from)+"→"+string(to), func(t *testing.T) {
				if got := from.CanMove(to); got != want {
					t.Errorf("CanMove: got %v, want %v", got, want)
				}
				err := from.Move(to)
				if want && err != nil {
					t.Errorf("Move: got %v, want nil", err)
				}
				if !want && !errors.Is(err, ErrTransition) {
					t.Errorf("Move: got %v, want ErrTransition", err)
				}
			})
		}
	}
}

func TestStateKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s                       State
		valid, terminal, active bool
	}{
		{Provisioning, true, false, true},
		{Ready, true, false, true},
		{InExercise, true, false, true},
		{Completed, true, true, false},
		{Failed, true, true, false},
		{Expired, true, true, false},
		{"paused", false, false, false},
	}
	for _, tt := range tests {
		if tt.s.Valid() != tt.valid || tt.s.Terminal() != tt.terminal || tt.s.Active() != tt.active {
			t.Errorf("%s: got valid %v terminal %v active %v, want %v %v %v", tt.s,
				tt.s.Valid(), tt.s.Terminal(), tt.s.Active(), tt.valid, tt.terminal, tt.active)
		}
	}
	if err := State("paused").Move(Ready); !errors.Is(err, ErrTransition) {
		t.Errorf("move from an unknown state: got %v, want ErrTransition", err)
	}
	if got := activeStates(); len(got) != 3 {
		t.Errorf("active states: got %v, want provisioning, ready, in-exercise", got)
	}
}
