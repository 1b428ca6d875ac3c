package class

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// event builds a timeline event as the session manager records it, with
// the session package's own data types.
func event(kind, exercise string, at time.Time, data any) *store.Event {
	b, _ := json.Marshal(data)
	return &store.Event{Kind: kind, Exercise: exercise, At: at, Data: b}
}

// TestExport records two learners' work the way sessions do and checks
// every cell of the CSV.
func TestExport(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := t.Context()
	c := f.create(t, ada, Spec{Name: "morning"})
	alice, err := f.svc.Join(ctx, "a", c.JoinCode, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	eve, err := f.svc.Join(ctx, "b", c.JoinCode, "=HYPERLINK(1)")
	if err != nil {
		t.Fatal(err)
	}
	t0 := monday9.Add(10 * time.Minute)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	newSession := func(id, learner, lab string, created time.Time, evs ...*store.Event) {
		t.Helper()
		s := &store.Session{ID: id, Learner: learner, Lab: lab, Cluster: "c-" + id, Provider: "embedded", State: "ready", Created: created}
		if err := f.store.CreateSession(ctx, s, evs...); err != nil {
			t.Fatal(err)
		}
	}
	put := func(r store.Result) {
		t.Helper()
		if err := f.store.PutResult(ctx, &r); err != nil {
			t.Fatal(err)
		}
	}

	// An earlier session of the failover lab that Alice gave up on.
	newSession("s-old", alice.Learner, "failover", monday9,
		event(session.KindChaos, "delete-primary", at(-9*time.Minute), session.ChaosData{T0: at(-9 * time.Minute)}))
	put(store.Result{SessionID: "s-old", Kind: store.ResultExercise, Item: "delete-primary", Score: 2, Total: 3, At: at(-8 * time.Minute)})

	// Her second session: chaos, reset, chaos again (T0), two hints, a
	// failed check, then recovery (T1); the next exercise with a hint
	// seen twice (before and after a reset), a partial check, and the quiz.
	t1 := at(95*time.Second + 250*time.Millisecond)
	newSession("s-new", alice.Learner, "failover", monday9.Add(5*time.Minute),
		event(session.KindChaos, "delete-primary", at(-time.Minute), session.ChaosData{T0: at(-time.Minute)}),
		event(session.KindReset, "delete-primary", at(-30*time.Second), nil),
		event(session.KindChaos, "delete-primary", t0, session.ChaosData{T0: t0}),
		event(session.KindHint, "delete-primary", at(time.Second), session.HintData{Index: 0, Tier: "nudge"}),
		event(session.KindHint, "delete-primary", at(2*time.Second), session.HintData{Index: 1, Tier: "pointer"}),
		event(session.KindRecovered, "delete-primary", t1, session.AttemptData{
			Attempt: &engine.Attempt{Exercise: "delete-primary", T0: t0, T1: t1}, Recovery: t1.Sub(t0)}),
		event(session.KindChaos, "force-delete", at(5*time.Minute), session.ChaosData{T0: at(5 * time.Minute)}),
		event(session.KindHint, "force-delete", at(6*time.Minute), session.HintData{Index: 0}),
		event(session.KindHint, "force-delete", at(7*time.Minute), session.HintData{Index: 0}),
		event(session.KindChaos, "force-delete", at(8*time.Minute), session.ChaosData{Error: "fault not confirmed"}),
	)
	put(store.Result{SessionID: "s-new", Kind: store.ResultExercise, Item: "delete-primary", Score: 3, Total: 3, Passed: true,
		Recovery: t1.Sub(t0), At: t1})
	put(store.Result{SessionID: "s-new", Kind: store.ResultExercise, Item: "force-delete", Score: 1, Total: 4, At: at(9 * time.Minute)})
	put(store.Result{SessionID: "s-new", Kind: store.ResultQuiz, Item: "failover", Score: 3, Total: 5, At: at(10 * time.Minute)})
	put(store.Result{SessionID: "s-old", Kind: store.ResultQuiz, Item: "failover", Score: 4, Total: 5, At: at(-7 * time.Minute)})

	// A session of another class's learner is not this class's business,
	// nor is a session of Alice's that was never linked to the class.
	newSession("s-other", "learner-elsewhere", "failover", monday9)
	put(store.Result{SessionID: "s-other", Kind: store.ResultExercise, Item: "delete-primary", Score: 3, Total: 3, Passed: true})
	newSession("s-unlinked", alice.Learner, "rbac", monday9)
	put(store.Result{SessionID: "s-unlinked", Kind: store.ResultExercise, Item: "restore-permissions", Score: 3, Total: 3, Passed: true})
	for _, id := range []string{"s-old", "s-new"} {
		if err := f.store.LinkSession(ctx, id, c.ID); err != nil {
			t.Fatal(err)
		}
	}

	var out bytes.Buffer
	if err := f.svc.Export(ctx, ada, "morning", &out); err != nil {
		t.Fatal(err)
	}
	a, e := alice.Learner, eve.Learner
	want := "learner,display_name,lab,exercise,score,total,t0,t1,time_to_recovery_s,hints,quiz_score,quiz_total\n" +
		a + ",Alice,failover,delete-primary,3,3,2026-12-07T09:10:00.000Z,2026-12-07T09:11:35.250Z,95.250,2,4,5\n" +
		a + ",Alice,failover,force-delete,1,4,2026-12-07T09:15:00.000Z,,,1,4,5\n" +
		a + ",Alice,rbac,restore-permissions,,,,,,0,,\n" +
		e + ",'=HYPERLINK(1),failover,delete-primary,,,,,,0,,\n" +
		e + ",'=HYPERLINK(1),failover,force-delete,,,,,,0,,\n" +
		e + ",'=HYPERLINK(1),rbac,restore-permissions,,,,,,0,,\n"
	if out.String() != want {
		t.Errorf("csv:\ngot:\n%s\nwant:\n%s", out.String(), want)
	}
}
