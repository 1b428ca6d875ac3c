package webapp

import (
	"context"
	"testing"
	"time"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/session"
)

// TestHousekeepingExpiresIdleSessions: a server with an idle timeout ends
// a session left alone past it, on a real cluster: the session is expired
// with the reason, and its cluster deleted.
func TestHousekeepingExpiresIdleSessions(t *testing.T) {
	ctx := context.Background()
	bin := clustertest.BinDir(t)
	a, err := app.Open(ctx, app.Config{DataDir: t.TempDir(), BinDir: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, err := a.Start(ctx, session.StartOptions{Learner: app.LocalLearner, Lab: "rbac"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = a.Stop(ctx, st.ID, "the test ended", nil) })
	w, err := New(ctx, a, Options{Expire: session.ExpireOptions{Idle: 2 * time.Second}, HousekeepingEvery: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		got, err := a.Status(ctx, st.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == session.Expired && !got.ClusterLive {
			if got.Ended != "no activity for 2s" {
				t.Errorf("ended: got %q, want the idle timeout", got.Ended)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the idle timeout: got %s, cluster live %v; want expired, cluster deleted", got.State, got.ClusterLive)
		}
	}
}
