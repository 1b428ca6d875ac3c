package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/store"
)

// Store is what the Manager needs of persistence (store.DB, on SQLite or
// PostgreSQL for a server farm).
type Store interface {
	CreateSession(ctx context.Context, s *store.Session, evs ...*store.Event) error
	UpdateSession(ctx context.Context, s *store.Session, evs ...*store.Event) error
	AppendEvents(ctx context.Context, sessionID string, evs ...*store.Event) error
	Session(ctx context.Context, id string) (store.Session, error)
	Sessions(ctx context.Context, f store.Filter) ([]store.Session, error)
	MarkSeen(ctx context.Context, id string, at time.Time) error
	Events(ctx context.Context, sessionID string, after int64, limit int) ([]store.Event, error)
	LatestEvents(ctx context.Context, sessionID string, f store.EventFilter, limit int) ([]store.Event, error)
	LastEvent(ctx context.Context, sessionID string, f store.EventFilter) (store.Event, bool, error)
	CountEvents(ctx context.Context, sessionID string, f store.EventFilter) (map[string]int, error)
	PutResult(ctx context.Context, r *store.Result) error
	Results(ctx context.Context, sessionID string) ([]store.Result, error)
}

var _ Store = (*store.DB)(nil)

// Errors a caller can test for with errors.Is.
var (
	// ErrNotFound: there is no session with that id (or none of the
	// learner's, for Resolve).
	ErrNotFound = errors.New("session not found")
	// ErrUnknownLab: the course has no lab with that id.
	ErrUnknownLab = course.ErrUnknownLab
	// ErrNoCluster: the session has no cluster (still provisioning, or
	// ended and its cluster deleted).
	ErrNoCluster = errors.New("session has no cluster")
	// ErrNoSession: the learner has no active session.
	ErrNoSession = errors.New("no active session")
	// ErrSeveralSessions: the learner has more than one active session
	// and did not say which.
	ErrSeveralSessions = errors.New("several active sessions")
	// ErrActive: the learner already has an active session.
	ErrActive = errors.New("an active session exists")
	// ErrEnded: the session has ended (completed, failed or expired).
	ErrEnded = errors.New("session has ended")
	// ErrNotReady: the session is still provisioning.
	ErrNotReady = errors.New("session is not ready")
	// ErrOutOfOrder: the step asked for does not come next (an exercise
	// that is not the current one, a check before the chaos, ...).
	ErrOutOfOrder = errors.New("out of order")
	// ErrUnsupported: the provider lacks a capability the lab requires.
	ErrUnsupported = errors.New("lab not supported by this cluster provider")
)

// Options configure a Manager.
type Options struct {
	// Store keeps sessions; required.
	Store Store
	// Provider makes the clusters of new sessions; required for anything
	// that touches one.
	Provider *cluster.Provider
	// ProviderNamed returns the provider of another name. A session's
	// cluster lives on the provider it was made on (its record names it),
	// whatever provider this process makes new clusters on: a kind session
	// started from the page is checked and stopped on kind from a
	// terminal. Nil when only Provider's sessions can be reached.
	ProviderNamed func(name string) (*cluster.Provider, error)
	// Course is the loaded course the sessions' labs and quizzes come
	// from; required.
	Course *course.Course
	// BinDir holds pg-operator and hostpod, which runs it as a host process.
	BinDir string
	// LockDir, when set, holds a lock file per session so that several
	// processes (oplab commands in two terminals) work on a session one
	// at a time; without it calls are serialised within this process only.
	LockDir string
	// CheckTimeout caps each goal check's time budget in Check, so a
	// learner gets a quick verdict; DefaultCheckTimeout when zero.
	CheckTimeout time.Duration
	// Logger receives debug messages; discarded when nil.
	Logger *slog.Logger
	// BeforeDelete, when set, is called before a session's cluster is
	// deleted, so what lives only in the cluster (the operator's log) can
	// be kept for the debrief. It must not take long: a stop waits. It is
	// called with the session locked and its cluster as it is, asleep
	// perhaps: it must not wake it.
	BeforeDelete func(ctx context.Context, session string, p *cluster.Provider, cluster string)
	// BuildBursts is how many builds of a learner's controller may run
	// beyond their cluster's CPU cap (a cell's, a kind node's) at once in
	// this process (see Build);
	// DefaultBuildBursts when zero, none when negative.
	BuildBursts int
	// WakeAdmit, when set, admits the start of a sleeping session's
	// stopped cluster as Admit admits a new one's: a wake from disk waits
	// its turn for room on the machine. Nil: it starts at once.
	WakeAdmit Admit
}

// DefaultBuildBursts lets one build at a time run uncapped: on two cores,
// an edit builds in about 5 s uncapped and 14 s at a cell's half core.
const DefaultBuildBursts = 1

// DefaultCheckTimeout is the cap on a goal check's budget in Check.
const DefaultCheckTimeout = 10 * time.Second

// Manager runs sessions. It is safe for concurrent use: calls on one
// session are serialised (across processes too, with Options.LockDir), and
// the store's optimistic versions catch any other writer.
type Manager struct {
	o       Options
	log     *slog.Logger
	mu      sync.Mutex
	locks   map[string]*sync.Mutex
	engines map[string]*engine.Engine
	// holders are, per session, the PID that held its file lock before
	// this Manager took it.
	holders map[string]int
	// marks space the writes of sessions being looked at (seen).
	marks seenMarks
	// bursts holds a token for each build running beyond its cell's CPU
	// cap (Options.BuildBursts).
	bursts chan struct{}
	// full holds, per session, the last time its cluster was seen
	// memory-full (see holdFull).
	full map[string]fullSeen
}

// New returns a Manager.
func New(o Options) (*Manager, error) {
	if o.Store == nil || o.Course == nil {
		return nil, errors.New("new session manager: a store and a course are required")
	}
	if o.CheckTimeout == 0 {
		o.CheckTimeout = DefaultCheckTimeout
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.BuildBursts == 0 {
		o.BuildBursts = DefaultBuildBursts
	}
	return &Manager{o: o, log: log, locks: map[string]*sync.Mutex{}, engines: map[string]*engine.Engine{}, holders: map[string]int{}, full: map[string]fullSeen{},
		bursts: make(chan struct{}, max(o.BuildBursts, 0))}, nil
}

// Lab returns lab id of the course; an error wrapping ErrUnknownLab names
// the labs there are.
func (m *Manager) Lab(id string) (*lab.Lab, error) { return m.o.Course.Lab(id) }

// Course returns the course the Manager runs labs of.
func (m *Manager) Course() *course.Course { return m.o.Course }

// engine returns the engine for a session's cluster.
func (m *Manager) engine(s *store.Session) (*engine.Engine, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.engines[s.ID]; ok {
		return e, nil
	}
	p, err := m.providerOf(s.Provider)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", s.ID, err)
	}
	cfg, err := p.RESTConfig(s.Cluster)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", s.ID, err)
	}
	e, err := engine.New(engine.Target{Config: cfg, Provider: p, Cluster: s.Cluster, BinDir: m.o.BinDir, Logger: m.log})
	if err != nil {
		return nil, err
	}
	m.engines[s.ID] = e
	return e, nil
}

// providerOf returns the provider named name, on which a session recorded
// with that name has its cluster. An empty name is Provider's (sessions
// recorded before the name was kept).
func (m *Manager) providerOf(name string) (*cluster.Provider, error) {
	if m.o.Provider == nil {
		return nil, errors.New("no cluster provider configured")
	}
	if name == "" || name == m.o.Provider.Info().Name {
		return m.o.Provider, nil
	}
	if m.o.ProviderNamed == nil {
		return nil, fmt.Errorf("the cluster is on the %s provider, and this oplab runs %s only", name, m.o.Provider.Info().Name)
	}
	return m.o.ProviderNamed(name)
}

// Provider returns the cluster provider of session id's cluster and the
// cluster's name.
func (m *Manager) Provider(ctx context.Context, id string) (*cluster.Provider, string, error) {
	// Whoever asks for the cluster is about to talk to it.
	if err := m.wake(ctx, id, nil); err != nil {
		return nil, "", err
	}
	rec, err := m.record(ctx, id)
	if err != nil {
		return nil, "", err
	}
	p, err := m.providerOf(rec.Provider)
	if err != nil {
		return nil, "", fmt.Errorf("session %s: %w", id, err)
	}
	return p, rec.Cluster, nil
}

func (m *Manager) forget(id string) {
	m.mu.Lock()
	delete(m.engines, id)
	m.mu.Unlock()
}

// work is a session's working state, kept as JSON in store.Session.Data.
type work struct {
	// Attempt is the attempt at the current exercise; nil before it began.
	Attempt *engine.Attempt `json:"attempt,omitempty"`
	// Hints is how many of its hints were shown.
	Hints int `json:"hints,omitempty"`
	// Error is why the session failed.
	Error string `json:"error,omitempty"`
	// Ended is why a live session was stopped (expired).
	Ended string `json:"ended,omitempty"`
	// TimeLimit is the session's own limit (StartOptions.TimeLimit).
	TimeLimit time.Duration `json:"timeLimitNs,omitempty"`
	// Extended is time added to whichever limit ends the session (its
	// own, or the server's; see Extend).
	Extended time.Duration `json:"extendedNs,omitempty"`
	// Claimed is when a warm session was handed to its learner.
	Claimed time.Time `json:"claimed,omitzero"`
	// Pending is the operation under way (chaos, reset, stop), recorded
	// before it acts and cleared with its outcome: found set by a command
	// that holds the session's lock, it was interrupted (see settle).
	Pending *Pending `json:"pending,omitempty"`
	// T1Source says how Attempt.T1 was found (see T1Watched); a Watcher
	// sets T1 with T1Watched before any check ran.
	T1Source string `json:"t1Source,omitempty"`
	// Notice says what oplab did about a command that was interrupted.
	Notice string `json:"notice,omitempty"`
	// Asleep is set while the session sleeps (see Sleep).
	Asleep *Asleep `json:"asleep,omitempty"`
}

// reset is w after its exercise was reset: the attempt, its hints and
// whatever was under way are gone; what belongs to the session (its time
// limit, the time an instructor added, when it was claimed) stays.
// notice, when set, says what was done.
func (w work) reset(notice string) work {
	return work{TimeLimit: w.TimeLimit, Extended: w.Extended, Claimed: w.Claimed, Notice: notice, Asleep: w.Asleep}
}

// decodeWork decodes a stored session's working state (or a part of it)
// into w; an empty state is the zero one.
func decodeWork(data []byte, w any) error {
	if len(data) == 0 {
		return nil
	}
	return json.Unmarshal(data, w)
}

// live is a loaded session: the stored record, its decoded working state
// and its lab.
type live struct {
	rec  store.Session
	work work
	lab  *lab.Lab
	// troubled: its cluster ran into a bound of its budget (read by
	// Status and Reset), so Reset makes it anew whatever the exercise's
	// step.
	troubled bool
}

// record reads session id's stored record; an unknown id is ErrNotFound.
func (m *Manager) record(ctx context.Context, id string) (store.Session, error) {
	rec, err := m.o.Store.Session(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return rec, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return rec, err
}

func (m *Manager) load(ctx context.Context, id string) (*live, error) {
	rec, err := m.record(ctx, id)
	if err != nil {
		return nil, err
	}
	s := &live{rec: rec}
	if len(rec.Data) > 0 {
		if err := json.Unmarshal(rec.Data, &s.work); err != nil {
			return nil, fmt.Errorf("session %s: decode working state: %w", id, err)
		}
	}
	if s.lab, err = m.Lab(rec.Lab); err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return s, nil
}

func (s *live) state() State { return State(s.rec.State) }

// exercise returns the current exercise, or nil when all are done.
func (s *live) exercise() *lab.Exercise {
	if s.rec.Exercise < 0 || s.rec.Exercise >= len(s.lab.Exercises) {
		return nil
	}
	return &s.lab.Exercises[s.rec.Exercise]
}

func (s *live) exerciseID() string {
	if ex := s.exercise(); ex != nil {
		return ex.ID
	}
	return ""
}

// save persists the session's record and working state with evs, in one
// transaction, then reports evs. A context already cancelled (the learner
// pressed Ctrl-C) does not stop the record of what happened.
func (m *Manager) save(ctx context.Context, s *live, progress Progress, evs ...*store.Event) error {
	data, err := json.Marshal(s.work)
	if err != nil {
		return fmt.Errorf("session %s: encode working state: %w", s.rec.ID, err)
	}
	s.rec.Data = data
	if err := m.o.Store.UpdateSession(context.WithoutCancel(ctx), &s.rec, evs...); err != nil {
		return err
	}
	for _, ev := range evs {
		progress.report(ev, nil)
	}
	return nil
}

// move changes the session's state (checked against the table), with the
// state event and evs, and persists it.
func (m *Manager) move(ctx context.Context, s *live, to State, reason string, progress Progress, evs ...*store.Event) error {
	from := s.state()
	if err := from.Move(to); err != nil {
		return fmt.Errorf("session %s: %w", s.rec.ID, err)
	}
	s.rec.State = string(to)
	msg := fmt.Sprintf("%s → %s", from, to)
	if from == to {
		msg = string(to)
	}
	if reason != "" {
		msg += ": " + reason
	}
	evs = append(evs, newEvent(KindState, s.exerciseID(), msg, StateData{From: from, To: to, Reason: reason}))
	return m.save(ctx, s, progress, evs...)
}

// stepReporter returns a function that persists a finished step on the
// session's timeline and then reports it; a started step is only reported.
func (m *Manager) stepReporter(ctx context.Context, id, exercise string, progress Progress) func(StepData) {
	return func(st StepData) {
		ev := newEvent(KindStep, exercise, st.Message, st)
		if st.Done {
			if err := m.o.Store.AppendEvents(context.WithoutCancel(ctx), id, ev); err != nil {
				m.log.Warn("record step", "session", id, "err", err)
			}
		}
		progress.report(ev, &st)
	}
}

// engineProgress adapts an engine Progress to a step reporter.
func engineProgress(rep func(StepData)) engine.Progress {
	return func(s engine.Step) {
		st := StepData{Phase: s.Phase, Kind: s.Kind, Index: s.Index, Total: s.Total, Message: s.Message, Done: s.Done, Elapsed: s.Elapsed}
		if s.Err != nil {
			st.Error = s.Err.Error()
		}
		rep(st)
	}
}
