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

// Class is a class as its instructor sees it.
type Class struct {
	ID   string   `json:"id"`
	Name string   `json:"name"`
	Labs []string `json:"labs"`
	// JoinCode is the code learners join with, grouped for reading.
	JoinCode  string        `json:"joinCode"`
	Capacity  int           `json:"capacity"`
	Members   int           `json:"members"`
	Opens     time.Time     `json:"opens,omitzero"`
	Closes    time.Time     `json:"closes,omitzero"`
	TimeLimit time.Duration `json:"timeLimitNs,omitempty"`
	// Warm is how many sessions of each lab are kept started ahead.
	Warm   map[string]int `json:"warm,omitempty"`
	Owner  string         `json:"owner"`
	Closed bool           `json:"closed"`
	// State is where the class stands now: open, scheduled, ended, closed
	// or full.
	State   string    `json:"state"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Version int64     `json:"version"`
}

// Member is a learner of a class as the instructor sees them.
type Member struct {
	Learner string    `json:"learner"`
	Name    string    `json:"name"`
	Joined  time.Time `json:"joined"`
}

func classView(c store.Class, members int, now time.Time) *Class {
	return &Class{
		ID: c.ID, Name: c.Name, Labs: c.Labs, JoinCode: FormatCode(c.JoinCode), Capacity: c.Capacity, Members: members,
		Opens: c.Opens, Closes: c.Closes, TimeLimit: c.TimeLimit, Owner: c.Owner, Closed: c.Closed, Warm: maps.Clone(c.Warm),
		State: state(c, members, now), Created: c.Created, Updated: c.Updated, Version: c.Version,
	}
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
