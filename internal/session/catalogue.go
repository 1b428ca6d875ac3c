package session

import (
	"context"
	"slices"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/store"
)

// Where a learner stands in a lab (LabProgress.State).
const (
	ProgressNotStarted = "notStarted"
	ProgressInProgress = "inProgress"
	ProgressCompleted  = "completed"
)

// LabEntry is a lab in the catalogue, with where the learner stands in it.
type LabEntry struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Summary string `json:"summary"`
	// Lang is the language of Title and Summary.
	Lang      locale.Lang `json:"lang"`
	Exercises int         `json:"exercises"`
	// TimeLimit is the exercises' time limits added up: how long the lab
	// takes at most, once started.
	TimeLimit jsonconv.Duration `json:"timeLimitMs"`
	// Requires are the provider capabilities the lab needs (named as the
	// JSON fields of the provider's capabilities); Missing those the
	// provider lacks: the lab cannot be started while any are.
	Requires []string    `json:"requires"`
	Missing  []string    `json:"missing,omitempty"`
	Quiz     string      `json:"quiz,omitempty"`
	Progress LabProgress `json:"progress"`
}

// LabProgress is where a learner stands in a lab: ProgressNotStarted;
// ProgressInProgress in a live session at an exercise; or
// ProgressCompleted, with the newest completed session's score and times
// to recovery.
type LabProgress struct {
	State string `json:"state"`
	// Session is the session the rest is about; empty when not started.
	Session      string `json:"session,omitempty"`
	SessionState State  `json:"sessionState,omitempty"`
	// Exercise is the index of the current exercise (in progress), and
	// ExerciseID its id.
	Exercise   int    `json:"exercise"`
	ExerciseID string `json:"exerciseId,omitempty"`
	// Score and Total add up the exercises' results; Results has each
	// exercise's (with its time to recovery) and the quiz's.
	Score   int       `json:"score"`
	Total   int       `json:"total"`
	Results []Result  `json:"results,omitempty"`
	Started time.Time `json:"started,omitzero"`
	// Finished is when the last exercise passed, for a completed lab.
	Finished time.Time `json:"finished,omitzero"`
}

// Catalogue lists every lab of the course with its title and summary in
// lang, how long it takes, what it needs and whether this Manager's
// provider has it, and where learner stands in it.
func (m *Manager) Catalogue(ctx context.Context, learner string, lang locale.Lang) ([]LabEntry, error) {
	if !lang.Valid() {
		lang = locale.En
	}
	var sessions []store.Session
	if learner != "" {
		var err error
		if sessions, err = m.o.Store.Sessions(ctx, store.Filter{Learner: learner}); err != nil {
			return nil, err
		}
	}
	labs := m.o.Course.Labs()
	out := make([]LabEntry, 0, len(labs))
	for _, l := range labs {
		e := LabEntry{ID: l.ID, Title: l.Title.In(lang), Summary: l.Summary.In(lang), Lang: lang, Exercises: len(l.Exercises),
			TimeLimit: jsonconv.Millis(timeLimit(l)), Requires: slices.Clone(l.Requires), Missing: m.missing(l), Quiz: l.Quiz}
		if e.Requires == nil {
			e.Requires = []string{}
		}
		p, err := m.progress(ctx, l, sessions)
		if err != nil {
			return nil, err
		}
		e.Progress = p
		out = append(out, e)
	}
	return out, nil
}

func timeLimit(l *lab.Lab) time.Duration {
	var d time.Duration
	for _, ex := range l.Exercises {
		d += ex.TimeLimit.Duration
	}
	return d
}

// missing returns the capabilities lab l needs that the provider lacks.
func (m *Manager) missing(l *lab.Lab) []string {
	var caps cluster.Capabilities
	if m.o.Provider != nil {
		caps = m.o.Provider.Info().Capabilities
	}
	return missingCapabilities(l.Requires, caps)
}

// progress finds where the learner stands in lab l from their sessions
// (newest first): a live session, else the newest completed one.
func (m *Manager) progress(ctx context.Context, l *lab.Lab, sessions []store.Session) (LabProgress, error) {
	var live, done *store.Session
	for i := range sessions {
		s := &sessions[i]
		switch {
		case s.Lab != l.ID:
		case !State(s.State).Terminal() && live == nil:
			live = s
		case State(s.State) == Completed && done == nil:
			done = s
		}
	}
	pick, state := live, ProgressInProgress
	if pick == nil {
		pick, state = done, ProgressCompleted
	}
	if pick == nil {
		return LabProgress{State: ProgressNotStarted}, nil
	}
	p := LabProgress{State: state, Session: pick.ID, SessionState: State(pick.State), Exercise: pick.Exercise, Started: pick.Created}
	if pick.Exercise >= 0 && pick.Exercise < len(l.Exercises) {
		p.ExerciseID = l.Exercises[pick.Exercise].ID
	}
	rs, err := m.o.Store.Results(ctx, pick.ID)
	if err != nil {
		return p, err
	}
	for _, r := range rs {
		p.Results = append(p.Results, resultView(r))
		if r.Kind == store.ResultExercise {
			p.Score += r.Score
			p.Total += r.Total
			if state == ProgressCompleted && r.At.After(p.Finished) {
				p.Finished = r.At
			}
		}
	}
	return p, nil
}
