package session

import (
	"fmt"
	"time"
)

// Action is a step a learner may take on a live session.
type Action string

// Actions on a session. A front end offers those Status.Actions lists and
// computes none itself: the same rules refuse a step that is asked for
// anyway.
const (
	ActChaos Action = "chaos"
	ActCheck Action = "check"
	ActHint  Action = "hint"
	ActReset Action = "reset"
	ActStop  Action = "stop"
)

// actionOrder is the order Status.Actions lists them in.
var actionOrder = []Action{ActChaos, ActCheck, ActHint, ActReset, ActStop}

// refuse says why s does not allow act now, or returns nil: the one place
// the order of an exercise's steps is decided. Chaos, Check, Hint, Reset
// and Stop ask it before they act, and Status lists what it allows.
func (s *live) refuse(act Action) error {
	if act == ActStop {
		if st := s.state(); st.Terminal() {
			return fmt.Errorf("session %s is %s%s: %w", s.rec.ID, st, because(s), ErrEnded)
		}
		return nil
	}
	if err := s.exercising(); err != nil {
		return err
	}
	ex := s.exercise()
	st, a, chaos := s.state(), s.work.Attempt, len(ex.Chaos) > 0
	switch act {
	case ActChaos:
		if st == InExercise && a != nil && (!chaos || !a.T0.IsZero()) {
			return fmt.Errorf("exercise %s already started at %s: repair it and run check, or reset it: %w",
				ex.ID, since(a).Format(time.TimeOnly), ErrOutOfOrder)
		}
	case ActCheck:
		switch {
		case st == InExercise && a == nil:
			return fmt.Errorf("exercise %s: no attempt was recorded: %w", ex.ID, ErrOutOfOrder)
		case st == Ready && chaos:
			return fmt.Errorf("exercise %s has not started: inject its chaos first: %w", ex.ID, ErrOutOfOrder)
		case st == InExercise && chaos && a.T0.IsZero():
			return fmt.Errorf("exercise %s: its fault was never confirmed, so recovery cannot count: reset it: %w", ex.ID, ErrOutOfOrder)
		}
	case ActHint:
		if a == nil && chaos {
			return fmt.Errorf("exercise %s has not started: inject its chaos first: %w", ex.ID, ErrOutOfOrder)
		}
	case ActReset:
		if a == nil && !s.troubled {
			return fmt.Errorf("exercise %s has not started, so there is nothing to reset: %w", ex.ID, ErrOutOfOrder)
		}
	default:
		return fmt.Errorf("no action %q: %w", act, ErrOutOfOrder)
	}
	return nil
}

// exercising says why s has no exercise to work on now (it ended, it is
// still provisioning, every exercise is done), or returns nil.
func (s *live) exercising() error {
	id, st := s.rec.ID, s.state()
	switch {
	case st.Terminal():
		return fmt.Errorf("session %s is %s%s: %w", id, st, because(s), ErrEnded)
	case st == Provisioning:
		return fmt.Errorf("session %s: %w (still provisioning)", id, ErrNotReady)
	case s.exercise() == nil:
		return fmt.Errorf("session %s: every exercise is done: %w", id, ErrEnded)
	}
	return nil
}

// actions lists what s allows now, in actionOrder.
func (s *live) actions() []Action {
	out := []Action{}
	for _, a := range actionOrder {
		if s.refuse(a) == nil {
			out = append(out, a)
		}
	}
	return out
}
