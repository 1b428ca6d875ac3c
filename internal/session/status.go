package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/store"
)

// Status is a session as a learner or an instructor sees it.
type Status struct {
	ID       string `json:"id"`
	Learner  string `json:"learner"`
	Lab      string `json:"lab"`
	Cluster  string `json:"cluster"`
	Provider string `json:"provider"`
	Lang     string `json:"lang"`
	State    State  `json:"state"`
	// Exercise is the index of the current exercise (== Exercises when
	// all are done) and ExerciseID its id.
	Exercise   int    `json:"exercise"`
	ExerciseID string `json:"exerciseId,omitempty"`
	Exercises  int    `json:"exercises"`
	// Kubeconfig is the admin kubeconfig of the cluster while it lives.
	Kubeconfig string          `json:"kubeconfig,omitempty"`
	Attempt    *engine.Attempt `json:"attempt,omitempty"`
	HintsShown int             `json:"hintsShown"`
	Results    []store.Result  `json:"results"`
	// Error is why a failed session failed.
	Error string `json:"error,omitempty"`
	// Notice says what oplab did about a command that was interrupted
	// (killed) half-way, or what the next command will do about it.
	Notice  string    `json:"notice,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// Status reads a session. A session that an oplab which is gone left
// provisioning is failed first (and its cluster deleted), and an
// interrupted stop finished: a status never shows work under way that
// nobody does.
func (m *Manager) Status(ctx context.Context, id string) (*Status, error) {
	if err := m.healID(ctx, id); err != nil {
		return nil, err
	}
	s, err := m.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return m.status(ctx, s)
}

// healID heals session id (see Heal).
func (m *Manager) healID(ctx context.Context, id string) error {
	rec, err := m.o.Store.Session(ctx, id)
	if err != nil {
		return err
	}
	return m.healOne(ctx, rec)
}

func (m *Manager) status(ctx context.Context, s *live) (*Status, error) {
	ctx = context.WithoutCancel(ctx)
	st := &Status{
		ID: s.rec.ID, Learner: s.rec.Learner, Lab: s.rec.Lab, Cluster: s.rec.Cluster, Provider: s.rec.Provider, Lang: s.rec.Lang,
		State: s.state(), Exercise: s.rec.Exercise, ExerciseID: s.exerciseID(), Exercises: len(s.lab.Exercises),
		Attempt: s.work.Attempt, HintsShown: s.work.Hints, Error: s.work.Error, Notice: s.work.Notice, Created: s.rec.Created, Updated: s.rec.Updated,
	}
	if p := s.work.Pending; p != nil && st.Notice == "" {
		st.Notice = m.pendingNotice(s, p)
	}
	if st.State != Provisioning && m.o.Provider != nil {
		// A completed session keeps its cluster (for the quiz, and to look
		// around) until it is stopped.
		st.Kubeconfig, _ = m.o.Provider.KubeconfigPath(s.rec.Cluster)
	}
	rs, err := m.o.Store.Results(ctx, s.rec.ID)
	if err != nil {
		return nil, err
	}
	st.Results = rs
	if st.Results == nil {
		st.Results = []store.Result{}
	}
	return st, nil
}

// Timeline returns a session's events after seq (0 for all), oldest first.
func (m *Manager) Timeline(ctx context.Context, id string, after int64) ([]store.Event, error) {
	if err := m.healID(ctx, id); err != nil {
		return nil, err
	}
	return m.o.Store.Events(ctx, id, after)
}

// Sessions lists a learner's sessions (all learners' when empty), newest
// first.
func (m *Manager) Sessions(ctx context.Context, learner string) ([]store.Session, error) {
	if err := m.Heal(ctx, learner); err != nil {
		return nil, err
	}
	return m.o.Store.Sessions(ctx, store.Filter{Learner: learner})
}

// Current returns the id of the learner's one active session:
// ErrNoSession when there is none, ErrSeveralSessions when there are more.
func (m *Manager) Current(ctx context.Context, learner string) (string, error) {
	if err := m.Heal(ctx, learner); err != nil {
		return "", err
	}
	active, err := m.o.Store.Sessions(ctx, store.Filter{Learner: learner, States: activeStates()})
	if err != nil {
		return "", err
	}
	switch len(active) {
	case 0:
		return "", ErrNoSession
	case 1:
		return active[0].ID, nil
	}
	ids := make([]string, len(active))
	for i, a := range active {
		ids[i] = a.ID
	}
	return "", fmt.Errorf("%w: %s", ErrSeveralSessions, strings.Join(ids, ", "))
}

// Latest returns the id of the learner's active session or, when none is
// active, of their newest one; ErrNoSession when they have none.
func (m *Manager) Latest(ctx context.Context, learner string) (string, error) {
	id, err := m.Current(ctx, learner)
	if !errors.Is(err, ErrNoSession) {
		return id, err
	}
	all, err := m.o.Store.Sessions(ctx, store.Filter{Learner: learner})
	if err != nil {
		return "", err
	}
	if len(all) == 0 {
		return "", ErrNoSession
	}
	return all[0].ID, nil
}

// pendingNotice says what became of an operation recorded as pending: under
// way, or interrupted and what the next command does about it.
func (m *Manager) pendingNotice(s *live, p *Pending) string {
	unlock, free := m.tryLock(s.rec.ID)
	if free {
		unlock()
	}
	if !free || !m.ownerKnown() {
		return fmt.Sprintf("%s under way since %s", p.Op, p.Since.Local().Format(time.TimeOnly))
	}
	what := "rolls the chaos back"
	if p.Op != OpChaos {
		what = "finishes it"
	}
	return fmt.Sprintf("%s was interrupted (%s stopped at %s); the next chaos, check, hint or reset %s",
		p.Op, m.who(s.rec.ID, p), p.Since.Local().Format(time.TimeOnly), what)
}
