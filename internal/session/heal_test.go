package session

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/store"
)

// withLocks returns a Manager on f's store sharing lockDir, as
// another oplab command would be.
func (f *fixture) withLocks(t *testing.T, lockDir string) *Manager {
	t.Helper()
	m, err := New(Options{Store: f.store, Provider: f.m.o.Provider, Course: shippedCourse(t), LockDir: lockDir})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestHealProvisioning: a session left provisioning by a process that is
// gone (its lock is free) is failed by the next command that looks at it,
// with the reason, and no longer blocks a start; one whose owner holds the
// lock is left provisioning, and commands on it are refused at once.
func TestHealProvisioning(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	dir := t.TempDir()
	owner, other := f.withLocks(t, dir), f.withLocks(t, dir)
	f.seed(t, "dead", "failover", Provisioning, 0, nil)
	if err := f.store.AppendEvents(ctx, "dead", newEvent(KindStep, "", "Starting etcd", StepData{Message: "Starting etcd", Done: true})); err != nil {
		t.Fatal(err)
	}
	f.seed(t, "busy", "rbac", Provisioning, 0, nil)
	unlock, err := owner.lock(ctx, "busy")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()

	st, err := other.Status(ctx, "dead")
	if err != nil {
		t.Fatal(err)
	}
	if st.State != Failed || !strings.Contains(st.Error, "stopped while starting the session, after \"Starting etcd\"") {
		t.Errorf("status of the abandoned start: got %s %q, want failed naming the last step", st.State, st.Error)
	}
	if st, _ := other.Status(ctx, "busy"); st.State != Provisioning {
		t.Errorf("status of a start under way: got %s, want provisioning", st.State)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := other.Chaos(short, "busy", "", nil); !errors.Is(err, ErrNotReady) {
		t.Errorf("chaos during a start under way: got %v, want ErrNotReady at once", err)
	}
	if id, err := other.Resolve(ctx, "alice", "", ""); id != "busy" {
		// busy is alice's only live session now.
		t.Errorf("resolve: got %q, %v; want busy (dead is not active any more)", id, err)
	}
	evs, _ := timeline(ctx, other, "dead")
	if last := evs[len(evs)-1]; last.Kind != KindState || !strings.Contains(last.Message, "provisioning → failed") {
		t.Errorf("last event of the abandoned start: got %+v, want the move to failed", last)
	}
}

// TestHealStartNotBlocked: a start is not refused for a session whose
// start was killed.
func TestHealStartNotBlocked(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	m := f.withLocks(t, t.TempDir())
	f.seed(t, "dead", "failover", Provisioning, 0, nil)
	_, err := m.Start(ctx, StartOptions{Learner: "alice", Lab: "failover"}, nil)
	if errors.Is(err, ErrActive) || err == nil {
		t.Errorf("start after a killed start: got %v, want no ErrActive (and a failure, without binaries)", err)
	}
	if st, _ := m.Status(ctx, "dead"); st.State != Failed {
		t.Errorf("the killed start: got %s, want failed", st.State)
	}
}

// TestHealInterrupted: an interrupted stop is finished by the next status;
// an interrupted chaos that had not recorded its attempt is cleared with a
// notice; the status of an interrupted chaos says what comes next.
func TestHealInterrupted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	m := f.withLocks(t, t.TempDir())
	seedPending := func(id string, st State, a *engine.Attempt, op string) {
		data, _ := json.Marshal(work{Attempt: a, Pending: &Pending{Op: op, Since: time.Now(), PID: 999999, Reason: "stopped by the learner"}})
		rec := &store.Session{ID: id, Learner: "alice", Lab: "failover", Cluster: id, Provider: "embedded", State: string(st), Lang: "en", Data: data}
		if err := f.store.CreateSession(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	seedPending("stopping", InExercise, &engine.Attempt{Exercise: "delete-primary", Started: time.Now()}, OpStop)
	seedPending("chaosless", Ready, nil, OpChaos)
	seedPending("chaos", InExercise, &engine.Attempt{Exercise: "delete-primary", Started: time.Now()}, OpChaos)

	st, err := m.Status(ctx, "stopping")
	if err != nil {
		t.Fatal(err)
	}
	if st.State != Expired || !strings.Contains(st.Notice, "pid 999999) stopped while ending the session") {
		t.Errorf("interrupted stop: got %s, notice %q; want expired, saying the stop was finished", st.State, st.Notice)
	}
	if evs, _ := timeline(ctx, m, "stopping"); len(evs) == 0 || !strings.Contains(evs[len(evs)-1].Message, "expired: stopped by the learner") {
		t.Errorf("timeline of the interrupted stop: got %+v, want the move to expired with the learner's reason", evs)
	}

	st, _ = m.Status(ctx, "chaos")
	if st.State != InExercise || !strings.Contains(st.Notice, "chaos was interrupted") || !strings.Contains(st.Notice, "rolls the chaos back") {
		t.Errorf("status of an interrupted chaos: got %s, notice %q; want it named, and what comes next", st.State, st.Notice)
	}

	// Chaos goes on to need a cluster, which this fixture has not: what
	// counts is that the interrupted one was cleared first.
	_, _ = m.Chaos(ctx, "chaosless", "", nil)
	st, _ = m.Status(ctx, "chaosless")
	if !strings.Contains(st.Notice, "stopped during chaos") || !strings.Contains(st.Notice, "before it changed the cluster") {
		t.Errorf("interrupted chaos before its attempt: notice %q, want it cleared, saying nothing changed", st.Notice)
	}
	rec, _ := f.store.Session(ctx, "chaosless")
	if pendingOf(rec.Data) != nil {
		t.Error("the interrupted chaos is still pending")
	}
}
