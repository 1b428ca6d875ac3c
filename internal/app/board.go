package app

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"oplab.dev/oplab/internal/board"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// IdleAfter is how long a live session may show no activity before the
// board calls its learner stuck.
const IdleAfter = 10 * time.Minute

// Board returns the board of the class name, which a manages. The view is
// package board's, which the web server renders as it is: the board's
// every field is decided here, once.
func (a *App) Board(ctx context.Context, actor class.Actor, name string, lang locale.Lang) (*board.View, error) {
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
	b := &board.View{Class: classView(*c), At: time.Now()}
	col := map[string]int{}
	for _, id := range c.Labs {
		l, err := a.course.Lab(id)
		if err != nil {
			return nil, fmt.Errorf("class %q: %w", name, err)
		}
		for _, ex := range l.Exercises {
			col[id+"/"+ex.ID] = len(b.Columns)
			b.Columns = append(b.Columns, board.Column{Lab: id, Exercise: ex.ID, Title: ex.Title.In(lang), TimeLimit: jsonconv.Duration(ex.TimeLimit.Duration)})
		}
	}
	latest := map[string]store.Session{} // sessions come oldest first
	for _, s := range sessions {
		latest[s.Learner] = s
	}
	rows := map[string]*board.Row{}
	for _, m := range members {
		r := &board.Row{Learner: m.Learner, Name: m.Name, Cells: make([]board.Cell, len(b.Columns))}
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
		r.Cells[i] = board.Cell{Score: res.Score, Total: res.Total, Passed: res.Passed, Recovery: jsonconv.Duration(res.Recovery), Hints: res.Hints,
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
		b.Capacity = capacityView(c)
	}
	return b, nil
}

// classView is class c as both front ends show it: the one view of a
// class (the class service's own Class holds the store's record).
func classView(c class.Class) board.Class {
	return board.Class{ID: c.ID, Name: c.Name, Labs: c.Labs, JoinCode: c.JoinCode, Members: c.Members, Capacity: c.Capacity,
		Owner: c.Owner, State: c.State, Opens: c.Opens, Closes: c.Closes, TimeLimit: jsonconv.Duration(c.TimeLimit), Closed: c.Closed,
		Version: c.Version, Warm: maps.Clone(c.Warm), Created: c.Created, Updated: c.Updated}
}

// viewOf is classView of what a class service call returned.
func viewOf(c *class.Class, err error) (*board.Class, error) {
	if err != nil {
		return nil, err
	}
	v := classView(*c)
	return &v, nil
}

// capacityView is what the board shows of admission's reading of the
// machine.
func capacityView(c Capacity) *board.Capacity {
	return &board.Capacity{Queue: c.Queue, Estimate: c.Estimate, Reason: c.Reason, Live: c.Live, Starting: c.Starting,
		MaxClusters: c.MaxClusters, ClusterMemory: c.Cost.Memory, ClusterCPU: c.Cost.CPU, Measured: c.Cost.Clusters,
		MemAvailable: c.Headroom.MemAvailable, IdleCores: c.Headroom.IdleCores, Cores: c.Headroom.Cores}
}

// fillLive fills a row from the member's latest session: where it stands
// and when it last did anything.
func (a *App) fillLive(ctx context.Context, r *board.Row, s store.Session) error {
	st, err := a.sessions.Status(ctx, s.ID)
	if err != nil {
		return err
	}
	r.Session, r.Lab, r.State, r.Active, r.Exercise = st.ID, st.Lab, string(st.State), st.State.Active(), st.ExerciseID
	r.Actions = instructorActions(st)
	if b := st.Budget; b != nil && b.Trouble != nil && r.Active {
		r.Trouble = b.Trouble.Kind
	}
	if at := st.Attempt; at != nil && !at.T0.IsZero() && at.T1.IsZero() {
		r.T0 = at.T0
	}
	r.LastActivity = st.Updated
	// The newest event alone: a row costs the same however long the
	// member's timeline has grown.
	last, ok, err := a.store.LastEvent(ctx, s.ID, store.EventFilter{})
	if err != nil {
		return err
	}
	if ok && last.At.After(r.LastActivity) {
		r.LastActivity = last.At
	}
	return nil
}

// instructorActions are what an instructor may do to the session st from
// the board (ResetLearner, ExtendLearner, EndLearner): reset when the
// session itself would allow its learner one, extend and end while it is
// live.
func instructorActions(st *session.Status) []string {
	if !st.Active {
		return nil
	}
	var out []string
	if slices.Contains(st.Actions, session.ActReset) {
		out = append(out, board.Reset)
	}
	return append(out, board.Extend, board.End)
}

// stuck says why r's learner looks stuck at now: a fault live past its
// exercise's time limit, or a live session idle for IdleAfter.
func stuck(r *board.Row, cols []board.Column, col map[string]int, now time.Time) string {
	if !r.Active {
		return ""
	}
	if i, ok := col[r.Lab+"/"+r.Exercise]; ok && !r.T0.IsZero() {
		if lim := cols[i].TimeLimit.Duration(); lim > 0 && now.Sub(r.T0) > lim {
			return board.StuckFault
		}
	}
	if !r.LastActivity.IsZero() && now.Sub(r.LastActivity) > IdleAfter {
		return board.StuckIdle
	}
	return ""
}
