package session

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

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
	seedAt("class", time.Now().Add(-2*time.Hour), time.Now())
	classRec, err := f.store.Session(ctx, "class")
	if err != nil {
		t.Fatal(err)
	}
	classRec.Data, _ = json.Marshal(work{TimeLimit: time.Hour})
	if err := f.store.UpdateSession(ctx, &classRec); err != nil {
		t.Fatal(err)
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
		"idle":   {Expired, "no activity for 2h0m0s"},
		"old":    {Expired, "the session reached its limit of 8h0m0s"},
		"class":  {Expired, "the session reached its limit of 1h0m0s"},
		"busy":   {Ready, ""},
		"typing": {Ready, ""},
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
