package session

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/pgtest"
	"oplab.dev/oplab/internal/store"
)

func TestMain(m *testing.M) { os.Exit(clustertest.Main(m, pgtest.Stop)) }

// shipped is the course built into oplab, loaded once for every test.
var shipped = sync.OnceValues(func() (*course.Course, error) { return course.Load(course.Embedded()) })

func shippedCourse(t *testing.T) *course.Course {
	t.Helper()
	c, err := shipped()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fixture is a Manager on a real SQLite file, with an embedded provider
// whose bin directory is empty: anything that would create a cluster
// fails, as it does on a machine without the control plane.
type fixture struct {
	m     *Manager
	store *store.DB
	path  string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), store.FileName)
	st, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := cluster.NewProvider(cluster.ProviderWithEmbedded(t.TempDir(), t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Store: st, Provider: p, Course: shippedCourse(t)})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{m: m, store: st, path: path}
}

// seed stores a session of lab in state at exercise, with an attempt when
// withAttempt, as an earlier oplab would have left it.
func (f *fixture) seed(t *testing.T, id, lab string, state State, exercise int, a *engine.Attempt) {
	t.Helper()
	data, _ := json.Marshal(work{Attempt: a})
	rec := &store.Session{ID: id, Learner: "alice", Lab: lab, Cluster: id, Provider: "embedded", State: string(state), Exercise: exercise, Lang: "en", Data: data}
	if err := f.store.CreateSession(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
}

func TestStartRefusals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.m.Start(ctx, StartOptions{Learner: "alice", Lab: "no-such-lab"}, nil); !errors.Is(err, ErrUnknownLab) || !strings.Contains(err.Error(), "failover") {
		t.Errorf("unknown lab: got %v, want ErrUnknownLab listing the labs", err)
	}
	if _, err := f.m.Start(ctx, StartOptions{Lab: "failover"}, nil); err == nil {
		t.Error("no learner: got nil error")
	}
	f.seed(t, "failover-aaaaaa", "failover", Ready, 0, nil)
	if _, err := f.m.Start(ctx, StartOptions{Learner: "alice", Lab: "rbac"}, nil); !errors.Is(err, ErrActive) || !strings.Contains(err.Error(), "failover-aaaaaa") {
		t.Errorf("second session: got %v, want ErrActive naming failover-aaaaaa", err)
	}
	if list, _ := f.store.Sessions(ctx, store.Filter{}); len(list) != 1 {
		t.Errorf("sessions after refusals: got %d, want 1 (nothing stored)", len(list))
	}
}

// TestStartFailure starts a lab where no cluster can be created: the
// session is recorded as failed, with every step on its timeline, and a
// new Manager on the reopened file sees the same.
func TestStartFailure(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	var updates []Update
	st, err := f.m.Start(ctx, StartOptions{Learner: "bob", Lab: "failover"}, func(u Update) { updates = append(updates, u) })
	if err == nil {
		t.Fatal("start without control-plane binaries: got nil error")
	}
	if st == nil || st.State != Failed || st.Error == "" || !strings.HasPrefix(st.ID, "failover-") {
		t.Fatalf("status: got %+v, want a failed failover session with its error", st)
	}
	if len(updates) < 2 || updates[0].Kind != KindState || updates[len(updates)-1].Kind != KindState {
		t.Errorf("updates: got %+v, want state events first and last", updates)
	}
	for _, u := range updates {
		if u.Seq == 0 && (u.Step == nil || u.Step.Done) {
			t.Errorf("update %+v was reported without being persisted", u)
		}
	}

	f.store.Close()
	st2, err := store.Open(ctx, f.path)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	m2, _ := New(Options{Store: st2, Course: shippedCourse(t)})
	again, err := m2.Status(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.State != Failed || again.Error != st.Error {
		t.Errorf("after reopen: got %s %q, want failed %q", again.State, again.Error, st.Error)
	}
	evs, _ := timeline(ctx, m2, st.ID)
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
	}
	got := strings.Join(kinds, ",")
	if !strings.HasPrefix(got, "state,") || !strings.HasSuffix(got, ",state") || !strings.Contains(evs[len(evs)-1].Message, "provisioning → failed: create cluster") {
		t.Errorf("timeline: got kinds %s, last %q; want the provisioning state first and the move to failed, with its cause, last", got, evs[len(evs)-1].Message)
	}
	if id, err := m2.Resolve(ctx, "bob", "", ""); err != nil || id != st.ID {
		t.Errorf("resolve after a failed start: got %q, %v; want the failed session %s", id, err, st.ID)
	}
}

// TestOrder drives calls that come out of order or on sessions that cannot
// take them; each is refused before anything touches a cluster, and the
// session is unchanged.
func TestOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	started := &engine.Attempt{Lab: "failover", Exercise: "delete-primary", Started: time.Now()}
	f.seed(t, "prov", "failover", Provisioning, 0, nil)
	f.seed(t, "ready", "failover", Ready, 0, nil)
	f.seed(t, "nofault", "failover", InExercise, 0, started)
	f.seed(t, "faulted", "failover", InExercise, 0, &engine.Attempt{Lab: "failover", Exercise: "delete-primary", Started: time.Now(), T0: time.Now()})
	f.seed(t, "done", "failover", Completed, 2, nil)
	f.seed(t, "gone", "failover", Expired, 0, nil)
	f.seed(t, "gone2", "failover", Failed, 0, nil)

	tests := []struct {
		name string
		call func() error
		want error
	}{
		{"chaos while provisioning", func() error { _, err := f.m.Chaos(ctx, "prov", "", nil); return err }, ErrNotReady},
		{"chaos on a completed session", func() error { _, err := f.m.Chaos(ctx, "done", "", nil); return err }, ErrEnded},
		{"check on an expired session", func() error { _, err := f.m.Check(ctx, "gone", nil); return err }, ErrEnded},
		{"hint on a failed session", func() error { _, err := f.m.Hint(ctx, "gone2"); return err }, ErrEnded},
		{"chaos of the second exercise first", func() error { _, err := f.m.Chaos(ctx, "ready", "force-delete", nil); return err }, ErrOutOfOrder},
		{"chaos of an unknown exercise", func() error { _, err := f.m.Chaos(ctx, "ready", "nope", nil); return err }, engine.ErrUnknownExercise},
		{"chaos twice", func() error { _, err := f.m.Chaos(ctx, "faulted", "", nil); return err }, ErrOutOfOrder},
		{"check before chaos", func() error { _, err := f.m.Check(ctx, "ready", nil); return err }, ErrOutOfOrder},
		{"check without a confirmed fault", func() error { _, err := f.m.Check(ctx, "nofault", nil); return err }, ErrOutOfOrder},
		{"hint before chaos", func() error { _, err := f.m.Hint(ctx, "ready"); return err }, ErrOutOfOrder},
		{"reset before the exercise started", func() error { _, err := f.m.Reset(ctx, "ready", nil); return err }, ErrOutOfOrder},
		{"unknown session", func() error { _, err := f.m.Check(ctx, "ghost", nil); return err }, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
	for _, id := range []string{"prov", "ready", "nofault", "faulted", "done", "gone", "gone2"} {
		evs, _ := f.store.Events(ctx, id, 0, 1000)
		rec, _ := f.store.Session(ctx, id)
		if len(evs) != 0 || rec.Version != 1 {
			t.Errorf("session %s after refused calls: %d events, version %d; want 0 and 1", id, len(evs), rec.Version)
		}
	}
}

func TestCurrent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.m.Resolve(ctx, "alice", "", ""); !errors.Is(err, ErrNoSession) {
		t.Errorf("no sessions: got %v, want ErrNoSession", err)
	}
	f.seed(t, "old", "rbac", Completed, 1, nil)
	f.seed(t, "a", "failover", Ready, 0, nil)
	if id, err := f.m.Resolve(ctx, "alice", "", ""); err != nil || id != "a" {
		t.Errorf("one active: got %q, %v; want a", id, err)
	}
	f.seed(t, "b", "quota", InExercise, 0, &engine.Attempt{})
	if _, err := f.m.Resolve(ctx, "alice", "", ""); !errors.Is(err, ErrSeveralSessions) || !strings.Contains(err.Error(), "a") {
		t.Errorf("two active: got %v, want ErrSeveralSessions naming them", err)
	}
}

// TestStop stops sessions whose clusters are gone: a live one expires, an
// ended one keeps its state, and stopping twice is harmless.
func TestStop(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	f.seed(t, "live", "failover", InExercise, 0, &engine.Attempt{Started: time.Now()})
	f.seed(t, "done", "failover", Completed, 2, nil)
	tests := []struct {
		id   string
		want State
	}{{"live", Expired}, {"live", Expired}, {"done", Completed}}
	for _, tt := range tests {
		st, err := f.m.Stop(ctx, tt.id, "", nil)
		if err != nil {
			t.Fatalf("stop %s: %v", tt.id, err)
		}
		if st.State != tt.want || st.ClusterLive {
			t.Errorf("stop %s: got %s (cluster live %v), want %s and no cluster", tt.id, st.State, st.ClusterLive, tt.want)
		}
	}
	evs, _ := timeline(ctx, f.m, "live")
	if len(evs) != 1 || evs[0].Kind != KindState || !strings.Contains(evs[0].Message, "in-exercise → expired: stopped") {
		t.Errorf("timeline of the stopped session: got %+v, want one move to expired (there was no cluster to delete)", evs)
	}
}

func TestMissingCapabilities(t *testing.T) {
	t.Parallel()
	caps := cluster.Capabilities{Disposable: true, HostProcesses: true}
	tests := []struct {
		req  []string
		want string
	}{
		{nil, "[]"},
		{[]string{"disposable", "hostProcesses"}, "[]"},
		{[]string{"realContainers"}, "[realContainers]"},
		{[]string{"realContainers", "loadImages", "realContainers"}, "[realContainers loadImages]"},
	}
	for _, tt := range tests {
		got := missingCapabilities(tt.req, caps)
		if s := "[" + strings.Join(got, " ") + "]"; s != tt.want {
			t.Errorf("missing(%v): got %s, want %s", tt.req, s, tt.want)
		}
	}
}

// TestRecover fails a session an oplab left provisioning, and leaves alone
// one still making progress and one this Manager is working on.
func TestRecover(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	for _, id := range []string{"stuck", "busy", "fresh"} {
		f.seed(t, id, "failover", Provisioning, 0, nil)
	}
	old := time.Now().Add(-time.Hour)
	for _, id := range []string{"stuck", "busy"} {
		if err := f.store.AppendEvents(ctx, id, &store.Event{Kind: KindStep, At: old}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.store.AppendEvents(ctx, "fresh", &store.Event{Kind: KindStep}); err != nil {
		t.Fatal(err)
	}
	f.seed(t, "over", "failover", Expired, 0, nil)
	unlock, err := f.m.lock(ctx, "busy")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := f.m.Recover(ctx, 10*time.Minute)
	unlock()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]State{"stuck": Failed, "busy": Provisioning, "fresh": Provisioning, "over": Expired}
	for id, st := range want {
		got, _ := f.m.Status(ctx, id)
		if got.State != st {
			t.Errorf("%s after recover: got %s, want %s", id, got.State, st)
		}
	}
	if strings.Join(rep.Failed, ",") != "stuck" || len(rep.Deleted) != 0 {
		t.Errorf("report: got %+v, want stuck failed and nothing deleted", rep)
	}
	if got, _ := f.m.Status(ctx, "stuck"); !strings.Contains(got.Error, "stopped while starting the session") {
		t.Errorf("error of the stuck session: got %q", got.Error)
	}
}
