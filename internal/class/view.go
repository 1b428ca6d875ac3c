package class

import (
	"maps"
	"time"

	"oplab.dev/oplab/internal/store"
)

// States of a class, as seen at a moment.
const (
	StateOpen      = "open"
	StateScheduled = "scheduled" // not open yet
	StateEnded     = "ended"     // past its closing time
	StateClosed    = "closed"    // closed by its instructor
	StateFull      = "full"
)

// Class is a class as the service hands it out: its stored record, with
// the join code in it grouped for reading (FormatCode), how many joined,
// and where it stands now. It is not JSON: the application layer makes
// the one view of a class that the front ends show (board.Class).
type Class struct {
	store.Class
	Members int
	// State is where the class stands now: open, scheduled, ended, closed
	// or full.
	State string
}

// Member is a learner of a class as the instructor sees them.
type Member struct {
	Learner string    `json:"learner"`
	Name    string    `json:"name"`
	Joined  time.Time `json:"joined"`
}

func classView(c store.Class, members int, now time.Time) *Class {
	v := &Class{Class: c, Members: members, State: state(c, members, now)}
	v.JoinCode, v.Warm = FormatCode(c.JoinCode), maps.Clone(c.Warm)
	return v
}

// state is where c stands at now with members joined.
func state(c store.Class, members int, now time.Time) string {
	switch {
	case c.Closed:
		return StateClosed
	case !c.Opens.IsZero() && now.Before(c.Opens):
		return StateScheduled
	case !c.Closes.IsZero() && !now.Before(c.Closes):
		return StateEnded
	case c.Capacity > 0 && members >= c.Capacity:
		return StateFull
	}
	return StateOpen
}
