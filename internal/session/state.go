package session

import (
	"errors"
	"fmt"
	"slices"
)

// State is where a session stands.
type State string

// States of a session.
const (
	// Provisioning: the cluster is being created and the lab set up.
	Provisioning State = "provisioning"
	// Ready: the current exercise has not started (or was reset).
	Ready State = "ready"
	// InExercise: the current exercise started; its chaos, if any, ran.
	InExercise State = "in-exercise"
	// Completed: every exercise passed.
	Completed State = "completed"
	// Failed: provisioning or setup failed.
	Failed State = "failed"
	// Expired: the session ended before it was completed (stopped by the
	// learner, ended by an instructor, or out of time).
	Expired State = "expired"
)

// transitions lists, for each state, the states it may move to.
var transitions = map[State][]State{
	Provisioning: {Ready, Failed, Expired},
	Ready:        {Ready, InExercise, Expired, Failed},
	InExercise:   {InExercise, Ready, Completed, Expired, Failed},
	Completed:    nil,
	Failed:       nil,
	Expired:      nil,
}

// ErrTransition is returned for a move the state table does not allow.
var ErrTransition = errors.New("invalid state transition")

// States returns every state.
func States() []State {
	return []State{Provisioning, Ready, InExercise, Completed, Failed, Expired}
}

// Valid reports whether s is a known state.
func (s State) Valid() bool {
	_, ok := transitions[s]
	return ok
}

// Terminal reports whether the session has ended.
func (s State) Terminal() bool { return s.Valid() && len(transitions[s]) == 0 }

// Active reports whether the session is live: known and not ended.
func (s State) Active() bool { return s.Valid() && !s.Terminal() }

// CanMove reports whether a session in s may move to to.
func (s State) CanMove(to State) bool { return slices.Contains(transitions[s], to) }

// Move checks a transition and returns an ErrTransition error when the
// table does not allow it.
func (s State) Move(to State) error {
	if !s.Valid() {
		return fmt.Errorf("%w: unknown state %q", ErrTransition, s)
	}
	if !s.CanMove(to) {
		return fmt.Errorf("%w from %s to %s", ErrTransition, s, to)
	}
	return nil
}

// activeStates are the states of live sessions, as strings for the store.
func activeStates() []string {
	var out []string
	for _, s := range States() {
		if s.Active() {
			out = append(out, string(s))
		}
	}
	return out
}
