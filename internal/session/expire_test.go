package session

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/store"
)

// TestExpire: a live session idle for longer than the limit, or older than
// the absolute limit, is stopped with the reason (its results kept); one
// with recent activity, a console command included, is not.
func TestExpire(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	long := time.Now().Add(-3 * time.Hour)
	seedAt := func(id string, created time.Time, lastEvent time.Time) {
		t.Helper()
		rec := &store.Session{ID: id, Learner: "alice-" + id, Lab: "failover", Cluster: id, Provider: "embedded", State: string(Ready), Lang: "en", Created: created}
		if err := f.store.CreateSession(ctx, rec); err != nil {
			t.Fatal(err)
		}
		ev := newEvent(KindState, "", "ready", StateData{To: Ready})
		ev.At = lastEvent
		if err := f.store.AppendEvents(ctx, id, ev); err != nil {
			t.Fatal(err)
		}
	}
	seedAt("idle", long, long)
	seedAt("busy", long, time.Now())
	seedAt("typing", long, long)
	seedAt("old", time.Now().Add(-9*time.Hour), time.Now())
	// A class's session with its own limit of an hour, busy, started two
	// hours ago.
	// The same, given 90 minutes more by its instructor; and one past the
	// server's limit given two hours more.
	for _, id := range []string{"class", "extended"} {
		seedAt(id, time.Now().Add(-2*time.Hour), time.Now())
		rec, err := f.store.Session(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		rec.Data, _ = json.Marshal(work{TimeLimit: time.Hour})
		if err := f.store.UpdateSession(ctx, &rec); err != nil {
			t.Fatal(err)
		}
	}
	seedAt("oldextended", time.Now().Add(-9*time.Hour), time.Now())
	for id, by := range map[string]time.Duration{"extended": 90 * time.Minute, "oldextended": 2 * time.Hour} {
		st, err := f.m.Extend(ctx, id, by, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Extended.Duration() != by {
			t.Errorf("%s extended: got %s, want %s", id, st.Extended.Duration(), by)
		}
	}
	if err := f.m.RecordConsole(ctx, "typing", ConsoleData{Line: "kubectl get pods", Duration: 120}); err != nil {
		t.Fatal(err)
	}

	ended, err := f.m.Expire(ctx, ExpireOptions{Idle: 2 * time.Hour, Max: 8 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ended)
	if want := []string{"class", "idle", "old"}; !slices.Equal(ended, want) {
		t.Errorf("expired: got %v, want %v", ended, want)
	}
	for id, want := range map[string]struct {
		state  State
		reason string
	}{
		"idle":        {Expired, "no activity for 2h0m0s"},
		"old":         {Expired, "the session reached its limit of 8h0m0s"},
		"class":       {Expired, "the session reached its limit of 1h0m0s"},
		"busy":        {Ready, ""},
		"typing":      {Ready, ""},
		"extended":    {Ready, ""},
		"oldextended": {Ready, ""},
	} {
		st, err := f.m.Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.State != want.state || st.Ended != want.reason {
			t.Errorf("%s: got %s %q, want %s %q", id, st.State, st.Ended, want.state, want.reason)
		}
	}
	if again, err := f.m.Expire(ctx, ExpireOptions{Idle: 2 * time.Hour, Max: 8 * time.Hour}); err != nil || len(again) != 0 {
		t.Errorf("a second pass: got %v, %v; want nothing more", again, err)
	}
	if ended, _ := f.m.Expire(ctx, ExpireOptions{}); len(ended) != 0 {
		t.Errorf("no limits: got %v expired", ended)
	}
}

func TestMaskSecrets(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"kubectl create secret generic db --from-literal=password=hunter2", "kubectl create secret generic db --from-literal=password=***"},
		{`kubectl create secret generic db --from-literal password="a b" --from-literal=user=me`, "kubectl create secret generic db --from-literal password=*** --from-literal=user=***"},
		{"kubectl get pods --token abc", "kubectl get pods --token ***"},
		{"kubectl get pods -L databases.example.com/role", "kubectl get pods -L databases.example.com/role"},
	} {
		if got := MaskSecrets(tc.in); got != tc.want {
			t.Errorf("MaskSecrets(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestExtend: an extension adds up, is recorded on the timeline with its
// reason, and no time, too much time or an ended session is refused.
func TestExtend(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	for id, state := range map[string]State{"live": InExercise, "gone": Expired} {
		rec := &store.Session{ID: id, Learner: "alice-" + id, Lab: "failover", Cluster: id, Provider: "embedded", State: string(state), Lang: "en"}
		if err := f.store.CreateSession(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	for _, by := range []time.Duration{15 * time.Minute, 5 * time.Minute} {
		if _, err := f.m.Extend(ctx, "live", by, "given by instructor ada", nil); err != nil {
			t.Fatal(err)
		}
	}
	st, err := f.m.Status(ctx, "live")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.Extended.Duration(), 20*time.Minute; got != want {
		t.Errorf("extended: got %s, want %s", got, want)
	}
	tl, err := timeline(ctx, f.m, "live")
	if err != nil {
		t.Fatal(err)
	}
	var got []Extension
	for _, ev := range tl {
		if ev.Kind == KindExtended && ev.Extended != nil {
			got = append(got, *ev.Extended)
		}
	}
	want := []Extension{{By: jsonconv.Millis(15 * time.Minute), Total: jsonconv.Millis(15 * time.Minute), Reason: "given by instructor ada"},
		{By: jsonconv.Millis(5 * time.Minute), Total: jsonconv.Millis(20 * time.Minute), Reason: "given by instructor ada"}}
	if !slices.Equal(got, want) {
		t.Errorf("timeline: got %+v, want %+v", got, want)
	}
	for _, tc := range []struct {
		id   string
		by   time.Duration
		want error
	}{
		{"live", 0, ErrInvalidExtension},
		{"live", -time.Minute, ErrInvalidExtension},
		{"live", MaxExtension + time.Minute, ErrInvalidExtension},
		{"gone", time.Minute, ErrEnded},
		{"nobody", time.Minute, ErrNotFound},
	} {
		if _, err := f.m.Extend(ctx, tc.id, tc.by, "", nil); !errors.Is(err, tc.want) {
			t.Errorf("extend %s by %s: got %v, want %v", tc.id, tc.by, err, tc.want)
		}
	}
}
