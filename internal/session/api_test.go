package session

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/store"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	if _, err := f.m.Resolve(ctx, "alice", "", ""); !errors.Is(err, ErrNoSession) {
		t.Errorf("no sessions: got %v, want ErrNoSession", err)
	}
	f.seed(t, "old", "rbac", Completed, 1, nil)
	f.seed(t, "live", "failover", Ready, 0, nil)
	if err := f.store.CreateSession(ctx, &store.Session{ID: "bobs", Learner: "bob", Lab: "rbac", Cluster: "bobs", State: string(Ready), Data: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		learner, lab, id string
		want             string
		wantErr          error
	}{
		{"alice", "", "", "live", nil},
		{"alice", "", "old", "old", nil},
		{"alice", "", "ghost", "", ErrNotFound},
		{"alice", "", "bobs", "", ErrNotFound}, // another learner's session is not theirs to find
		{"bob", "", "", "bobs", nil},
		// A lab's page means the lab's session: the active one, else the
		// newest, which may have ended.
		{"alice", "rbac", "", "old", nil},
		{"alice", "failover", "", "live", nil},
		{"alice", "quota", "", "", ErrNoSession},
		{"alice", "failover", "old", "", ErrNotFound}, // of another lab
	}
	for _, tt := range tests {
		got, err := f.m.Resolve(ctx, tt.learner, tt.lab, tt.id)
		if got != tt.want || !errors.Is(err, tt.wantErr) {
			t.Errorf("resolve(%s, lab %q, %q): got %q, %v; want %q, %v", tt.learner, tt.lab, tt.id, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := f.m.Status(ctx, "ghost"); !errors.Is(err, ErrNotFound) {
		t.Errorf("status of an unknown session: got %v, want ErrNotFound", err)
	}
	if _, err := f.m.Timeline(ctx, "ghost", 0, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("timeline of an unknown session: got %v, want ErrNotFound", err)
	}
	if _, err := f.m.Stop(ctx, "ghost", "", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("stop of an unknown session: got %v, want ErrNotFound", err)
	}
	if _, err := f.m.Kubeconfig(ctx, "live"); !errors.Is(err, ErrNoCluster) {
		t.Errorf("kubeconfig of a session without a cluster: got %v, want ErrNoCluster", err)
	}
}

// nsField matches a JSON key of a duration in nanoseconds, or a Go field
// name (capitalised) that leaked without a json tag.
var badKey = regexp.MustCompile(`"([A-Z][A-Za-z]*|[a-z]+Ns)":`)

// TestViewJSON reads a session with a recorded check, result and steps
// through the Manager and checks the JSON a browser would get: camelCase
// keys, durations in milliseconds, and none of the store's or engine's
// internals (the attempt's baseline, the raw event data).
func TestViewJSON(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	t0 := time.Now().Add(-2 * time.Second).UTC()
	a := &engine.Attempt{Lab: "failover", Exercise: "delete-primary", Started: t0.Add(-time.Second), T0: t0, T1: t0.Add(1500 * time.Millisecond),
		Baseline: engine.Baseline{ClusterExists: true, Primary: "prod-db-0"}}
	f.seed(t, "s", "failover", InExercise, 0, a)
	rep := engine.Report{Results: []engine.Result{{Kind: "primaryChanged", Weight: 2, Passed: true, Reason: "ok", Elapsed: jsonconv.Duration(250 * time.Millisecond)}},
		Score: 2, Total: 2, Passed: true, At: t0.Add(1500 * time.Millisecond), Recovery: 1500 * time.Millisecond}
	s, err := f.m.load(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	step := newEvent(KindStep, "delete-primary", "delete the primary", StepData{Phase: "chaos", Message: "delete the primary", Done: true, Elapsed: 1234567 * time.Microsecond})
	if err := f.store.AppendEvents(ctx, "s", step); err != nil {
		t.Fatal(err)
	}
	var updates []Update
	if err := f.m.recordCheck(ctx, s, s.exercise(), rep, false, func(u Update) { updates = append(updates, u) }); err != nil {
		t.Fatal(err)
	}
	st, err := f.m.Status(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Results) != 1 || st.Results[0].Recovery.Duration() != 1500*time.Millisecond {
		t.Errorf("results: got %+v, want one with a recovery of 1500 ms", st.Results)
	}
	evs, err := timeline(ctx, f.m, "s")
	if err != nil {
		t.Fatal(err)
	}
	byKind := map[string]Event{}
	for _, ev := range evs {
		byKind[ev.Kind] = ev
	}
	if s := byKind[KindStep].Step; s == nil || s.Elapsed.Milliseconds() != 1235 || s.Phase != "chaos" {
		t.Errorf("step event: got %+v, want phase chaos, 1235 ms", s)
	}
	if c := byKind[KindCheck].Report; c == nil || c.Score != 2 || len(c.Results) != 1 || c.Results[0].Elapsed.Milliseconds() != 250 {
		t.Errorf("check event: got %+v, want the report with 2 points and a 250 ms check", c)
	}
	if r := byKind[KindRecovered]; r.Recovery.Milliseconds() != 1500 || r.Attempt == nil || !r.Attempt.T0.Equal(t0) {
		t.Errorf("recovered event: got %+v, want 1500 ms and the attempt's T0", r)
	}
	if len(updates) == 0 || updates[len(updates)-1].Seq == 0 {
		t.Errorf("updates: got %+v, want recorded events", updates)
	}
	for name, v := range map[string]any{"status": st, "timeline": evs, "updates": updates} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		js := string(data)
		if m := badKey.FindString(js); m != "" {
			t.Errorf("%s JSON has key %s: %s", name, m, js)
		}
		for _, leak := range []string{"baseline", "prod-db-0", `"data"`, "sessionId", "version"} {
			if strings.Contains(js, leak) {
				t.Errorf("%s JSON holds %s: %s", name, leak, js)
			}
		}
	}
	js, _ := json.Marshal(st)
	for _, want := range []string{`"recoveryMs":1500`, `"clusterLive":false`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("status JSON lacks %s: %s", want, js)
		}
	}
	if js, _ := json.Marshal(evs); !strings.Contains(string(js), `"t0":"`) || !strings.Contains(string(js), `"elapsedMs":1235`) {
		t.Errorf("timeline JSON lacks T0 or the step's 1235 ms: %s", js)
	}
}

// TestCatalogue lists the labs for a learner with a session in progress in
// one lab, a completed one in another, and an expired one in a third.
func TestCatalogue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	f.seed(t, "fo", "failover", InExercise, 1, &engine.Attempt{Started: time.Now()})
	f.seed(t, "rb", "rbac", Completed, 1, nil)
	f.seed(t, "qu", "quota", Expired, 0, nil)
	at := time.Now().UTC().Truncate(time.Millisecond)
	for _, r := range []*store.Result{
		{SessionID: "rb", Kind: store.ResultExercise, Item: "restore-permissions", Score: 3, Total: 4, Passed: true, Recovery: 42 * time.Second, At: at},
		{SessionID: "rb", Kind: store.ResultQuiz, Item: "rbac", Score: 5, Total: 6, At: at},
	} {
		if err := f.store.PutResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	list, err := f.m.Catalogue(ctx, "alice", locale.Ko)
	if err != nil {
		t.Fatal(err)
	}
	labs := shippedCourse(t).Labs()
	if len(list) != len(labs) {
		t.Fatalf("got %d labs, want %d", len(list), len(labs))
	}
	byID := map[string]LabEntry{}
	for i, e := range list {
		byID[e.ID] = e
		l := labs[i]
		if e.ID != l.ID || e.Title != l.Title.Ko || e.Summary != l.Summary.Ko || e.Exercises != len(l.Exercises) || e.TimeLimit <= 0 {
			t.Errorf("entry %d: got %s %q (%d exercises, %d ms), want %s %q in Korean with a time", i, e.ID, e.Title, e.Exercises, e.TimeLimit, l.ID, l.Title.Ko)
		}
	}
	if p := byID["failover"].Progress; p.State != ProgressInProgress || p.Session != "fo" || p.Exercise != 1 || p.ExerciseID != "force-delete" {
		t.Errorf("failover: got %+v, want in progress in fo at exercise 1 (force-delete)", p)
	}
	p := byID["rbac"].Progress
	if p.State != ProgressCompleted || p.Session != "rb" || p.Score != 3 || p.Total != 4 || len(p.Results) != 2 || !p.Finished.Equal(at) {
		t.Errorf("rbac: got %+v, want completed in rb, 3/4, two results, finished at %s", p, at)
	}
	for _, r := range p.Results {
		if r.Kind == ResultExercise && r.Recovery.Duration() != 42*time.Second {
			t.Errorf("rbac exercise result: got recovery %d ms, want 42000", r.Recovery)
		}
	}
	for _, id := range []string{"quota", "storage"} {
		if p := byID[id].Progress; p.State != ProgressNotStarted || p.Session != "" {
			t.Errorf("%s: got %+v, want not started (an expired session does not count)", id, p)
		}
	}
	if others, _ := f.m.Catalogue(ctx, "bob", locale.En); others[0].Progress.State != ProgressNotStarted || others[0].Title != labs[0].Title.En {
		t.Errorf("another learner: got %+v, want nothing of alice's, in English", others[0])
	}
}

// TestHintJSON: what unlocked a hint and what the next waits for reach a
// browser in lowerCamel names, times in ms, with what counts them from.
func TestHintJSON(t *testing.T) {
	t.Parallel()
	faulted := &engine.Attempt{Started: time.Now(), T0: time.Now()}
	started := &engine.Attempt{Started: time.Now()}
	long := strings.Repeat("x", seenMax+10)
	tests := []struct {
		name string
		v    any
		want []string
	}{
		{"time since the fault", unlockView(lab.Unlock{Kind: lab.UnlockTime, After: time.Minute}, faulted),
			[]string{`"kind":"time"`, `"afterMs":60000`, `"since":"fault"`}},
		{"time since the start", unlockView(lab.Unlock{Kind: lab.UnlockTime, After: time.Minute}, started),
			[]string{`"since":"start"`}},
		{"event", unlockView(lab.Unlock{Kind: lab.UnlockEvent, Reason: "FailingOver", Seen: "electing prod-db-1"}, faulted),
			[]string{`"kind":"event"`, `"reason":"FailingOver"`, `"seen":"electing prod-db-1"`}},
		{"a long line is clipped", unlockView(lab.Unlock{Kind: lab.UnlockLog, Pattern: "x+", Seen: long}, faulted),
			[]string{`"kind":"log"`, `"pattern":"x+"`, `"seen":"` + long[:seenMax] + `…"`}},
		{"next", waitView(lab.Wait{After: time.Minute, Left: 40 * time.Second, When: []lab.Evidence{{EventReason: "FailoverComplete"}, {EventMessage: "exceeded quota"}}}),
			[]string{`"leftMs":40000`, `"evidence":[{"kind":"event","reason":"FailoverComplete"},{"kind":"message","pattern":"exceeded quota"}]`}},
		{"next due", waitView(lab.Wait{Due: true}), []string{`{"due":true}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			js := string(data)
			if m := badKey.FindString(js); m != "" {
				t.Errorf("JSON has key %s: %s", m, js)
			}
			for _, want := range tt.want {
				if !strings.Contains(js, want) {
					t.Errorf("got %s, want it to contain %s", js, want)
				}
			}
		})
	}
}
