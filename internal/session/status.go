package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/fence"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/store"
)

// Status is a session as a learner or an instructor sees it. A front end
// checks Learner against the caller before it shows anything.
type Status struct {
	ID       string `json:"id"`
	Learner  string `json:"learner"`
	Lab      string `json:"lab"`
	Cluster  string `json:"cluster"`
	Provider string `json:"provider"`
	Lang     string `json:"lang"`
	State    State  `json:"state"`
	// Active is whether the session is live (State.Active): a front end
	// reads it, never a list of states of its own.
	Active bool `json:"active"`
	// Actions are the steps the session allows now, in order; a page
	// offers these and no others.
	Actions []Action `json:"actions"`
	// Exercise is the index of the current exercise (== Exercises when
	// all are done) and ExerciseID its id.
	Exercise   int    `json:"exercise"`
	ExerciseID string `json:"exerciseId,omitempty"`
	Exercises  int    `json:"exercises"`
	// ClusterLive is true while the session's cluster exists (a
	// completed session keeps it for the quiz until it is stopped); its
	// kubeconfig is then had from Manager.Kubeconfig.
	ClusterLive bool     `json:"clusterLive"`
	Attempt     *Attempt `json:"attempt,omitempty"`
	HintsShown  int      `json:"hintsShown"`
	Results     []Result `json:"results"`
	// Error is why a failed session failed.
	Error string `json:"error,omitempty"`
	// Ended is why an expired session was stopped before it was
	// completed: by its learner, or a limit (idle, time).
	Ended string `json:"ended,omitempty"`
	// Notice says what oplab did about a command that was interrupted
	// (killed) half-way, or what the next command will do about it.
	Notice string `json:"notice,omitempty"`
	// Extended is the time an instructor added to the session's limit.
	Extended jsonconv.Duration `json:"extendedMs,omitempty"`
	// Budget is what the session's cluster takes of its share of the
	// machine, and the bound it ran into, if any; nil where the provider
	// keeps no budget.
	Budget *Budget `json:"budget,omitempty"`
	// Asleep is set while nobody looks at the session and its cluster
	// sleeps (see Sleep); the learner's next request wakes it.
	Asleep  *Asleep   `json:"asleep,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// Status reads a session; an unknown id is ErrNotFound. A session that
// an oplab which is gone left provisioning is failed first (and its
// cluster deleted), and an interrupted stop finished: a status never shows
// work under way that nobody does.
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
	rec, err := m.record(ctx, id)
	if err != nil {
		return err
	}
	return m.healOne(ctx, rec)
}

func (m *Manager) status(ctx context.Context, s *live) (*Status, error) {
	ctx = context.WithoutCancel(ctx)
	b := m.budgetOf(ctx, s)
	if b != nil && s.work.Asleep != nil {
		b.Trouble = nil // a stopped cluster's processes are down on purpose
	}
	s.troubled = b != nil && b.Trouble != nil
	st := &Status{
		ID: s.rec.ID, Learner: s.rec.Learner, Lab: s.rec.Lab, Cluster: s.rec.Cluster, Provider: s.rec.Provider, Lang: s.rec.Lang,
		State: s.state(), Active: s.state().Active(), Actions: s.actions(), Exercise: s.rec.Exercise, ExerciseID: s.exerciseID(), Exercises: len(s.lab.Exercises),
		ClusterLive: m.hasCluster(s), Attempt: attemptView(s.work.Attempt), HintsShown: s.work.Hints, Error: s.work.Error, Ended: s.work.Ended,
		Notice: s.work.Notice, Created: s.rec.Created, Updated: s.rec.Updated, Extended: jsonconv.Millis(s.work.Extended),
		Budget: b, Asleep: s.work.Asleep,
	}
	if st.Attempt != nil {
		st.Attempt.T1Source = s.work.T1Source
	}
	if p := s.work.Pending; p != nil && st.Notice == "" {
		st.Notice = m.pendingNotice(s, p)
	}
	rs, err := m.o.Store.Results(ctx, s.rec.ID)
	if err != nil {
		return nil, err
	}
	st.Results = make([]Result, 0, len(rs))
	for _, r := range rs {
		st.Results = append(st.Results, resultView(r))
	}
	return st, nil
}

// MaxTimelinePage is the most events one read of a timeline returns, and
// what a read that asks for no number gets: a session's history is read a
// page at a time, whatever its length.
const MaxTimelinePage = 500

// TimelinePage is a page of a session's timeline.
type TimelinePage struct {
	Events []Event `json:"events"`
	// More is true when events after the last one follow: read again
	// after its Seq.
	More bool `json:"more"`
}

// Timeline returns a page of a session's timeline: up to limit events
// after seq (0 from the start), oldest first; limit is at most, and by
// default (0), MaxTimelinePage. An unknown id is ErrNotFound.
func (m *Manager) Timeline(ctx context.Context, id string, after int64, limit int) (TimelinePage, error) {
	if err := m.healID(ctx, id); err != nil {
		return TimelinePage{}, err
	}
	if limit <= 0 || limit > MaxTimelinePage {
		limit = MaxTimelinePage
	}
	evs, err := m.o.Store.Events(ctx, id, after, limit+1)
	if err != nil {
		return TimelinePage{}, err
	}
	p := TimelinePage{Events: make([]Event, 0, min(len(evs), limit)), More: len(evs) > limit}
	for _, ev := range evs[:min(len(evs), limit)] {
		p.Events = append(p.Events, eventView(ev))
	}
	return p, nil
}

// TimelineEnd returns the newest n events of a session's timeline, oldest
// first, and how many older ones it leaves out: a window on a long
// history, read without the rest of it. An unknown id is ErrNotFound.
func (m *Manager) TimelineEnd(ctx context.Context, id string, n int) (evs []Event, older int, err error) {
	if err := m.healID(ctx, id); err != nil {
		return nil, 0, err
	}
	counts, err := m.o.Store.CountEvents(ctx, id, store.EventFilter{})
	if err != nil {
		return nil, 0, err
	}
	latest, err := m.o.Store.LatestEvents(ctx, id, store.EventFilter{}, n)
	if err != nil {
		return nil, 0, err
	}
	total := 0
	for _, c := range counts {
		total += c
	}
	evs = make([]Event, 0, len(latest))
	for _, ev := range latest {
		evs = append(evs, eventView(ev))
	}
	return evs, max(total-len(evs), 0), nil
}

// HintCounts counts the hints shown in session id, by exercise, every
// attempt's.
func (m *Manager) HintCounts(ctx context.Context, id string) (map[string]int, error) {
	if _, err := m.record(ctx, id); err != nil {
		return nil, err
	}
	return m.o.Store.CountEvents(ctx, id, store.EventFilter{Kinds: []string{KindHint}})
}

// Sessions lists a learner's sessions (all learners' when empty), newest
// first.
func (m *Manager) Sessions(ctx context.Context, learner string) ([]Summary, error) {
	if err := m.Heal(ctx, learner); err != nil {
		return nil, err
	}
	list, err := m.o.Store.Sessions(ctx, store.Filter{Learner: learner})
	if err != nil {
		return nil, err
	}
	out := make([]Summary, 0, len(list))
	for _, r := range list {
		sum := Summary{ID: r.ID, Learner: r.Learner, Lab: r.Lab, Provider: r.Provider, Lang: r.Lang, State: State(r.State), Active: State(r.State).Active(),
			Exercise: r.Exercise, Created: r.Created, Updated: r.Updated}
		if l, err := m.Lab(r.Lab); err == nil {
			sum.Exercises = len(l.Exercises)
		}
		out = append(out, sum)
	}
	return out, nil
}

// Resolve returns the session a learner's action means, whichever front
// end asks: id when given (ErrNotFound unless it is one of the learner's
// sessions, of lab when lab is given, so that nobody learns of another's),
// else the learner's active session (of lab), else their newest one (of
// lab), which may have ended: its status and results stay readable.
// ErrNoSession when there is none; ErrSeveralSessions when more than one
// is active.
func (m *Manager) Resolve(ctx context.Context, learner, lab, id string) (string, error) {
	if id != "" {
		rec, err := m.record(ctx, id)
		if err != nil {
			return "", err
		}
		if rec.Learner != learner || lab != "" && rec.Lab != lab {
			return "", fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		return id, nil
	}
	if err := m.Heal(ctx, learner); err != nil {
		return "", err
	}
	active, err := m.o.Store.Sessions(ctx, store.Filter{Learner: learner, Lab: lab, States: activeStates()})
	if err != nil {
		return "", err
	}
	switch len(active) {
	case 0:
	case 1:
		return active[0].ID, nil
	default:
		ids := make([]string, len(active))
		for i, a := range active {
			ids[i] = a.ID
		}
		return "", fmt.Errorf("%w: %s", ErrSeveralSessions, strings.Join(ids, ", "))
	}
	all, err := m.o.Store.Sessions(ctx, store.Filter{Learner: learner, Lab: lab}) // newest first
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

// Kubeconfig returns the learner's kubeconfig of session id's cluster, for
// the web console and the YAML editor: the learner's identity, fenced in
// by RBAC and admission policy (see package fence), never the admin's. It
// holds a credential: hand it to the session's learner only, and never log
// it. ErrNoCluster when the session has no cluster.
func (m *Manager) Kubeconfig(ctx context.Context, id string) ([]byte, error) {
	p, name, err := m.clusterOf(ctx, id)
	if err != nil {
		return nil, err
	}
	admin, err := p.KubeconfigPath(name)
	if err != nil {
		return nil, err
	}
	cfg, err := p.RESTConfig(name)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	data, err := fence.Kubeconfig(ctx, cfg, fence.KubeconfigPath(admin))
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return data, nil
}

// KubeconfigPath returns where session id's admin kubeconfig is on this
// machine. Only a front end whose user is at this machine (the offline
// CLI, on a machine of the learner's own) may show it; a browser gets
// Kubeconfig, the learner's, instead. ErrNoCluster when
// the session has no cluster.
func (m *Manager) KubeconfigPath(ctx context.Context, id string) (string, error) {
	p, name, err := m.clusterOf(ctx, id)
	if err != nil {
		return "", err
	}
	return p.KubeconfigPath(name)
}

// clusterOf returns session id's cluster: its provider and name;
// ErrNoCluster when it has none.
func (m *Manager) clusterOf(ctx context.Context, id string) (*cluster.Provider, string, error) {
	// Whoever asks for the cluster is about to talk to it.
	if err := m.wake(ctx, id, nil); err != nil {
		return nil, "", err
	}
	s, err := m.load(ctx, id)
	if err != nil {
		return nil, "", err
	}
	if !m.hasCluster(s) {
		return nil, "", fmt.Errorf("session %s (%s): %w", id, s.state(), ErrNoCluster)
	}
	p, err := m.providerOf(s.rec.Provider)
	if err != nil {
		return nil, "", fmt.Errorf("session %s: %w", id, err)
	}
	return p, s.rec.Cluster, nil
}
