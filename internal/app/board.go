package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/store"
)

// IdleAfter is how long a live session may show no activity before the
// board calls its learner stuck.
const IdleAfter = 10 * time.Minute

// Reasons a learner is stuck.
const (
	// StuckFault: the exercise's fault has been in effect longer than the
	// exercise's time limit without a recovery.
	StuckFault = "fault"
	// StuckIdle: a live session with no event for IdleAfter.
	StuckIdle = "idle"
)

// Board is a class as its instructor watches it: a row per member, a
// column per exercise of the class's labs.
type Board struct {
	Class   class.Class `json:"class"`
	Columns []Column    `json:"columns"`
	Rows    []BoardRow  `json:"rows"`
	At      time.Time   `json:"at"`
	// Capacity is the machine as admission sees it (the queue of starts
	// waiting for room, its estimate, what a cluster costs, the headroom
	// left); nil when the machine could not be measured.
	Capacity *Capacity `json:"capacity,omitempty"`
}

// Column is one exercise of one of the class's labs.
type Column struct {
	Lab       string        `json:"lab"`
	Exercise  string        `json:"exercise"`
	Title     string        `json:"title"`
	TimeLimit time.Duration `json:"timeLimitMs,omitempty"`
}

// MarshalJSON writes c's time limit in whole milliseconds.
func (c Column) MarshalJSON() ([]byte, error) {
	type plain Column
	return json.Marshal(struct {
		plain
		TimeLimit int64 `json:"timeLimitMs,omitempty"`
	}{plain(c), jsonconv.Millis(c.TimeLimit)})
}

// BoardRow is one member: their latest session of the class and their
// outcome on each exercise.
type BoardRow struct {
	Learner string `json:"learner"`
	Name    string `json:"name"`
	// Session is the member's latest session in the class ("" before
	// their first start), with its lab, state and current exercise.
	Session string `json:"session,omitempty"`
	Lab     string `json:"lab,omitempty"`
	State   string `json:"state,omitempty"`
	// Active is whether that session is live (session.State.Active).
	Active   bool   `json:"active,omitempty"`
	Exercise string `json:"exercise,omitempty"`
	// T0 is when the current exercise's fault took effect, while it is
	// not recovered.
	T0    time.Time `json:"t0,omitzero"`
	Cells []Cell    `json:"cells"`
	// Passed counts the exercises passed; Hints all hints seen.
	Passed int `json:"passed"`
	Hints  int `json:"hints"`
	// QuizScore of QuizTotal sums the best quiz of each lab taken.
	QuizScore    int       `json:"quizScore"`
	QuizTotal    int       `json:"quizTotal"`
	LastActivity time.Time `json:"lastActivity,omitzero"`
	// Stuck is why the learner looks stuck (StuckFault, StuckIdle), or "".
	Stuck string `json:"stuck,omitempty"`
}

// Cell is a member's outcome on one exercise (see class.Row).
type Cell struct {
	Score    int           `json:"score"`
	Total    int           `json:"total"`
	Passed   bool          `json:"passed"`
	Recovery time.Duration `json:"recoveryMs,omitempty"`
	Hints    int           `json:"hints"`
	// Current marks the exercise the member's live session is on.
	Current bool `json:"current,omitempty"`
}

// MarshalJSON writes c's time to recovery in whole milliseconds.
func (c Cell) MarshalJSON() ([]byte, error) {
	type plain Cell
	return json.Marshal(struct {
		plain
		Recovery int64 `json:"recoveryMs,omitempty"`
	}{plain(c), jsonconv.Millis(c.Recovery)})
}

// Board returns the board of the class name, which a manages.
func (a *App) Board(ctx context.Context, actor class.Actor, name string, lang locale.Lang) (*Board, error) {
	c, err := a.classes.Get(ctx, actor, name)
	if err != nil {
		return nil, err
	}
	members, err := a.classes.Members(ctx, actor, name)
	if err != nil {
		return nil, err
	}
	results, err := a.classes.Results(ctx, actor, name)
	if err != nil {
		return nil, err
	}
	sessions, err := a.store.ClassSessions(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	b := &Board{Class: *c, At: time.Now()}
	col := map[string]int{}
	for _, id := range c.Labs {
		l, err := a.course.Lab(id)
		if err != nil {
			return nil, fmt.Errorf("class %q: %w", name, err)
		}
		for _, ex := range l.Exercises {
			col[id+"/"+ex.ID] = len(b.Columns)
			b.Columns = append(b.Columns, Column{Lab: id, Exercise: ex.ID, Title: ex.Title.In(lang), TimeLimit: ex.TimeLimit.Duration})
		}
	}
	latest := map[string]store.Session{} // sessions come oldest first
	for _, s := range sessions {
		latest[s.Learner] = s
	}
	rows := map[string]*BoardRow{}
	for _, m := range members {
		r := &BoardRow{Learner: m.Learner, Name: m.Name, Cells: make([]Cell, len(b.Columns))}
		if s, ok := latest[m.Learner]; ok {
			if err := a.fillLive(ctx, r, s); err != nil {
				return nil, fmt.Errorf("class %q: %w", name, err)
			}
		}
		rows[m.Learner] = r
	}
	quizzes := map[string]bool{}
	for _, res := range results {
		r, i := rows[res.Learner], col[res.Lab+"/"+res.Exercise]
		if r == nil {
			continue
		}
		r.Cells[i] = Cell{Score: res.Score, Total: res.Total, Passed: res.Passed, Recovery: res.Recovery, Hints: res.Hints,
			Current: r.Lab == res.Lab && r.Exercise == res.Exercise && r.Active}
		r.Hints += res.Hints
		if res.Passed {
			r.Passed++
		}
		if k := res.Learner + "/" + res.Lab; res.QuizTotal > 0 && !quizzes[k] {
			quizzes[k] = true
			r.QuizScore += res.QuizScore
			r.QuizTotal += res.QuizTotal
		}
	}
	for _, m := range members {
		r := rows[m.Learner]
		r.Stuck = stuck(r, b.Columns, col, b.At)
		b.Rows = append(b.Rows, *r)
	}
	// The board shows without the machine's figures rather than not at
	// all: they are a reading of /proc, not the class's state.
	if c, err := a.Capacity(ctx); err == nil {
		b.Capacity = &c
	}
	return b, nil
}

// fillLive fills a row from the member's latest session: where it stands
// and when it last did anything.
func (a *App) fillLive(ctx context.Context, r *BoardRow, s store.Session) error {
	st, err := a.sessions.Status(ctx, s.ID)
	if err != nil {
		return err
	}
	r.Session, r.Lab, r.State, r.Active, r.Exercise = st.ID, st.Lab, string(st.State), st.State.Active(), st.ExerciseID
	if at := st.Attempt; at != nil && !at.T0.IsZero() && at.T1.IsZero() {
		r.T0 = at.T0
	}
	r.LastActivity = st.Updated
	evs, err := a.store.Events(ctx, s.ID, 0)
	if err != nil {
		return err
	}
	if n := len(evs); n > 0 && evs[n-1].At.After(r.LastActivity) {
		r.LastActivity = evs[n-1].At
	}
	return nil
}

// stuck says why r's learner looks stuck at now: a fault live past its
// exercise's time limit, or a live session idle for IdleAfter.
func stuck(r *BoardRow, cols []Column, col map[string]int, now time.Time) string {
	if !r.Active {
		return ""
	}
	if i, ok := col[r.Lab+"/"+r.Exercise]; ok && !r.T0.IsZero() {
		if lim := cols[i].TimeLimit; lim > 0 && now.Sub(r.T0) > lim {
			return StuckFault
		}
	}
	if !r.LastActivity.IsZero() && now.Sub(r.LastActivity) > IdleAfter {
		return StuckIdle
	}
	return ""
}
