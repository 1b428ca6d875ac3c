package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/store"
)

// StartOptions say who starts which lab.
type StartOptions struct {
	Learner string
	Lab     string
	// Lang is the learner's language ("en" when empty).
	Lang string
	// AllowMany lets a learner start a session while another is active;
	// by default that is ErrActive.
	AllowMany bool
	// TimeLimit ends the session this long after it started (a class's
	// limit per session; see Expire); none when zero.
	TimeLimit time.Duration
	// Pool names the warm pool a ready session is taken from, when it has
	// one (see Prepare); the default pool is "".
	Pool string
	// Created, when set, hears the session's id as soon as it is recorded
	// and before its cluster is made (a class links the session to
	// itself, so a start killed midway still counts in the class). An
	// error fails the start.
	Created func(ctx context.Context, id string) error
	// Admit, when set, is asked for room on the machine before a new
	// cluster is made (not when a warm session is handed out), and before
	// the session is recorded, so a start that waits or is refused leaves
	// nothing behind. It may wait, telling progress where the start
	// stands (KindQueue). done hears how the start ended.
	Admit Admit
}

// Admit waits for, or refuses, room for one more cluster; done says that
// the start it admitted ended, with a ready session (ok) or none.
type Admit func(ctx context.Context, progress Progress) (done func(ok bool), err error)

// QueueUpdate is the notice a waiting start hears: not recorded, as its
// session does not exist yet.
func QueueUpdate(q QueueData) Update {
	msg := fmt.Sprintf("the machine is full (%s): %d of %d in the queue for a cluster", q.Reason, q.Position, q.Length)
	if q.Estimate > 0 {
		msg += fmt.Sprintf(", about %s to wait", q.Estimate.Duration().Round(time.Second))
	}
	return Update{Kind: KindQueue, At: time.Now().UTC(), Message: msg, Queue: &q}
}

// Start creates a session for o.Lab: it checks that the provider can run
// the lab, records the session (provisioning), creates its cluster, runs
// the lab's setup (which installs the operator), and moves it to ready.
// Each step is recorded and reported to progress as it ends. When anything
// fails the session is recorded as failed, its cluster is deleted, and the
// error is returned with the session as far as it got.
func (m *Manager) Start(ctx context.Context, o StartOptions, progress Progress) (*Status, error) {
	l, err := m.Lab(o.Lab)
	if err != nil {
		return nil, err
	}
	if m.o.Provider == nil {
		return nil, errors.New("start lab: no cluster provider configured")
	}
	info := m.o.Provider.Info()
	if missing := missingCapabilities(l.Requires, info.Capabilities); len(missing) > 0 {
		return nil, fmt.Errorf("lab %s needs %v, which the %s provider lacks: %w", l.ID, missing, info.Name, ErrUnsupported)
	}
	if o.Learner == "" {
		return nil, errors.New("start lab: no learner")
	}
	if o.Lang == "" {
		o.Lang = "en"
	}
	// A session left provisioning by a start that was killed is failed
	// now, so it neither blocks this start nor reads as active.
	if err := m.Heal(ctx, o.Learner); err != nil {
		return nil, err
	}
	if !o.AllowMany {
		active, err := m.o.Store.Sessions(ctx, store.Filter{Learner: o.Learner, States: activeStates()})
		if err != nil {
			return nil, err
		}
		if len(active) > 0 {
			return nil, fmt.Errorf("%w: %s (lab %s, %s); stop it first", ErrActive, active[0].ID, active[0].Lab, active[0].State)
		}
		// A learner holds one cluster at a time: the ones their ended
		// sessions kept (a completed lab's, for its quiz) go first.
		if err := m.ReleaseEnded(ctx, o.Learner, progress); err != nil {
			return nil, err
		}
		if st, ok, err := m.claim(ctx, l, o, progress); err != nil || ok {
			return st, err
		}
	}
	if o.Admit != nil {
		done, err := o.Admit(ctx, progress)
		if err != nil {
			return nil, err
		}
		st, err := m.create(ctx, l, o, progress)
		done(err == nil)
		return st, err
	}
	return m.create(ctx, l, o, progress)
}

// create records a new session of l, makes its cluster and sets the lab up.
func (m *Manager) create(ctx context.Context, l *lab.Lab, o StartOptions, progress Progress) (*Status, error) {
	info := m.o.Provider.Info()
	id := newID(l.ID)
	// Held from before the session exists until it is ready or failed:
	// another oplab that finds it provisioning and its lock free knows
	// that this process is gone (the kernel releases a dead process's
	// lock).
	unlock, err := m.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	s := &live{lab: l, rec: store.Session{
		ID: id, Learner: o.Learner, Lab: l.ID, Cluster: id, Provider: info.Name,
		State: string(Provisioning), Lang: o.Lang,
	}, work: work{TimeLimit: o.TimeLimit}}
	s.rec.Data, _ = json.Marshal(s.work) // a work always encodes
	first := newEvent(KindState, "", "provisioning", StateData{To: Provisioning, Reason: "lab " + l.ID + " started"})
	if err := m.o.Store.CreateSession(ctx, &s.rec, first); err != nil {
		return nil, err
	}
	progress.report(first, nil)
	if o.Created != nil {
		if err := o.Created(ctx, id); err != nil {
			return m.fail(ctx, s, err, progress)
		}
	}
	if err := m.provision(ctx, s, progress); err != nil {
		return m.fail(ctx, s, err, progress)
	}
	if err := m.move(ctx, s, Ready, "cluster ready, lab set up", progress); err != nil {
		return nil, err
	}
	return m.status(ctx, s)
}

// provision creates the cluster and runs the lab's setup.
func (m *Manager) provision(ctx context.Context, s *live, progress Progress) error {
	rep := m.stepReporter(ctx, s.rec.ID, "", progress)
	index := 0
	// The lab's setup runs at the speed of a start, not at the cell's
	// share of the CPU: the cluster is capped once it is done (Settle).
	err := m.o.Provider.Create(ctx, s.rec.Cluster, cluster.CreateUnsettled(), cluster.CreateWithProgress(func(st cluster.Step) {
		d := StepData{Phase: "cluster", Index: index, Message: st.Name, Done: st.Done, Elapsed: st.Duration}
		if st.Err != nil {
			d.Error = st.Err.Error()
		}
		if st.Done {
			index++
		}
		rep(d)
	}))
	if err != nil {
		return fmt.Errorf("create cluster %s: %w", s.rec.Cluster, err)
	}
	ev := newEvent(KindCluster, "", "cluster "+s.rec.Cluster+" created", ClusterData{Name: s.rec.Cluster})
	if err := m.o.Store.AppendEvents(context.WithoutCancel(ctx), s.rec.ID, ev); err != nil {
		return err
	}
	progress.report(ev, nil)
	e, err := m.engine(&s.rec)
	if err != nil {
		return err
	}
	if err := e.Setup(ctx, s.lab, engineProgress(rep)); err != nil {
		return fmt.Errorf("set up lab %s: %w", s.lab.ID, err)
	}
	if err := m.o.Provider.Settle(ctx, s.rec.Cluster); err != nil {
		return fmt.Errorf("cap cluster %s at its share of the CPU: %w", s.rec.Cluster, err)
	}
	return nil
}

// fail records a failed provisioning and deletes what was made.
func (m *Manager) fail(ctx context.Context, s *live, cause error, progress Progress) (*Status, error) {
	ctx = context.WithoutCancel(ctx)
	s.work.Error = cause.Error()
	var evs []*store.Event
	if deleted, err := m.deleteCluster(ctx, s); deleted && err == nil {
		evs = append(evs, newEvent(KindCluster, "", "cluster "+s.rec.Cluster+" deleted", ClusterData{Name: s.rec.Cluster, Deleted: true}))
	}
	if err := m.move(ctx, s, Failed, cause.Error(), progress, evs...); err != nil {
		return nil, errors.Join(cause, err)
	}
	st, _ := m.status(ctx, s)
	return st, fmt.Errorf("session %s failed: %w", s.rec.ID, cause)
}

// deleteCluster deletes the session's cluster and reports whether there
// was one to delete.
func (m *Manager) deleteCluster(ctx context.Context, s *live) (bool, error) {
	m.forget(s.rec.ID)
	p, err := m.providerOf(s.rec.Provider)
	if err != nil {
		return false, fmt.Errorf("delete cluster %s: %w", s.rec.Cluster, err)
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	if m.o.BeforeDelete != nil && s.rec.Cluster != "" {
		m.o.BeforeDelete(dctx, s.rec.ID, p, s.rec.Cluster)
	}
	err = p.Delete(dctx, s.rec.Cluster)
	if errors.Is(err, cluster.ErrNotFound) {
		s.work.Asleep = nil
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("delete cluster %s: %w", s.rec.Cluster, err)
	}
	s.work.Asleep = nil // a cluster that is gone does not sleep
	return true, nil
}

// missingCapabilities returns the required capabilities (named as the
// JSON fields of cluster.Capabilities) that caps lacks.
func missingCapabilities(required []string, caps cluster.Capabilities) []string {
	data, _ := json.Marshal(caps)
	have := map[string]bool{}
	_ = json.Unmarshal(data, &have)
	var missing []string
	for _, r := range required {
		if !have[r] && !slices.Contains(missing, r) {
			missing = append(missing, r)
		}
	}
	return missing
}

// newID returns a session id that is also a valid cluster name: the lab's
// id and a random suffix.
func newID(labID string) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	if len(labID) > 30 {
		labID = labID[:30]
	}
	return labID + "-" + hex.EncodeToString(b)
}

// exerciseIndex returns the index of exercise id in l, or -1.
func exerciseIndex(l *lab.Lab, id string) int {
	for i := range l.Exercises {
		if l.Exercises[i].ID == id {
			return i
		}
	}
	return -1
}
