package app

import (
	"errors"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// TestExtendLearner, on a real store: the class's instructor and an
// admin give a member's session more time, recorded on its timeline with
// who gave it; another class's instructor is refused, and a session of no
// class of hers is not found.
func TestExtendLearner(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cr := newClassroom(t)
	cr.seed(t, &store.Session{ID: "failover-a", Learner: cr.alice.Learner, Lab: "failover", State: string(session.InExercise), Created: time.Now().UTC()}, map[string]any{}, nil)

	for _, tc := range []struct {
		who   class.Actor
		by    time.Duration
		total time.Duration
		giver string
	}{
		{cr.ada, 15 * time.Minute, 15 * time.Minute, "instructor ada"},
		{class.LocalAdmin(), 10 * time.Minute, 25 * time.Minute, "an administrator"},
	} {
		st, err := cr.a.ExtendLearner(ctx, tc.who, "morning", "failover-a", tc.by, nil)
		if err != nil {
			t.Fatalf("%+v extends: %v", tc.who, err)
		}
		if got := st.Extended.Duration(); got != tc.total {
			t.Errorf("%+v extends by %s: got %s in all, want %s", tc.who, tc.by, got, tc.total)
		}
		tl, err := cr.a.sessions.Timeline(ctx, "failover-a", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		last := tl.Events[len(tl.Events)-1]
		if last.Kind != session.KindExtended || last.Extended == nil || last.Extended.By.Duration() != tc.by || !strings.Contains(last.Extended.Reason, tc.giver) {
			t.Errorf("%+v extends: got last event %+v, want the extension by %s given by %s", tc.who, last, tc.by, tc.giver)
		}
	}

	for _, tc := range []struct {
		who        class.Actor
		name, id   string
		by         time.Duration
		want       error
		wantReason string
	}{
		{cr.bob, "morning", "failover-a", time.Minute, class.ErrForbidden, "another class's instructor"},
		{cr.bob, "evening", "failover-a", time.Minute, session.ErrNotFound, "a session outside the named class"},
		{cr.ada, "morning", "failover-a", 0, session.ErrInvalidExtension, "no time"},
	} {
		if _, err := cr.a.ExtendLearner(ctx, tc.who, tc.name, tc.id, tc.by, nil); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.wantReason, err, tc.want)
		}
	}
	st, err := cr.a.sessions.Status(ctx, "failover-a")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Extended.Duration(), 25*time.Minute; got != want {
		t.Errorf("after the refusals: got %s in all, want %s", got, want)
	}
}
