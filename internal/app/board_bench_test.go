package app

import (
	"fmt"
	"testing"
	"time"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// BenchmarkBoard30 measures one fetch of the board of a class of 30
// members, each with a session in exercise and 40 timeline events: what
// every open board pays each time one of the class's sessions records
// an event.
//
//	go test -run '^$' -bench Board30 -benchtime 20x -count 5 ./internal/app/
func BenchmarkBoard30(b *testing.B) {
	cr := newClassroom(b)
	ctx := b.Context()
	c, err := cr.a.classes.Get(ctx, cr.ada, "morning")
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	for i := range 28 { // with alice and carol, 30
		j, err := cr.a.classes.Join(ctx, fmt.Sprintf("10.0.1.%d", i), c.JoinCode, fmt.Sprintf("Learner %02d", i))
		if err != nil {
			b.Fatal(err)
		}
		var evs []*store.Event
		for k := range 40 {
			evs = append(evs, &store.Event{Kind: session.KindConsole, Exercise: "delete-primary", Message: "kubectl get pods", At: now.Add(time.Duration(k-40) * time.Second)})
		}
		cr.seed(b, &store.Session{ID: fmt.Sprintf("failover-%02d", i), Learner: j.Learner, Lab: "failover", State: string(session.InExercise), Created: now.Add(-time.Hour)},
			map[string]any{"attempt": map[string]any{"lab": "failover", "exercise": "delete-primary", "started": now, "t0": now}}, evs,
			&store.Result{Kind: store.ResultExercise, Item: "delete-primary", Score: 2, Total: 5, At: now})
	}
	for b.Loop() {
		bd, err := cr.a.Board(ctx, cr.ada, "morning", locale.En)
		if err != nil || len(bd.Rows) != 30 {
			b.Fatalf("board: got %v rows, %v", len(bd.Rows), err)
		}
	}
}
