package app

import (
	"context"
	"os"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/pgtest"
	"oplab.dev/oplab/internal/session"
)

func TestMain(m *testing.M) { os.Exit(clustertest.Main(m, pgtest.Stop)) }

// TestWarmPool, on real clusters: the keeper prepares a warm failover
// session; a learner's Start takes that one (ready, set up, theirs), the
// keeper prepares the next, and a second learner's Start takes it; a
// warm session is never expired for idling.
func TestWarmPool(t *testing.T) {
	ctx := context.Background()
	a, err := Open(ctx, Config{DataDir: t.TempDir(), BinDir: clustertest.BinDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	t.Cleanup(func() { stopAll(t, a) }) // first: cleanups run last in, first out
	reported := make(chan int, 16)
	k := a.KeepWarm(PoolOptions{Sizes: map[string]int{"failover": 1}, Every: 100 * time.Millisecond,
		Report: func(lab string, ready int) {
			select {
			case reported <- ready:
			default: // enough heard: the keeper must never wait on a report
			}
		}})
	k.Start(ctx)
	defer k.Stop()

	warm := waitWarm(t, a)
	if ended, err := a.sessions.Expire(ctx, session.ExpireOptions{Idle: time.Nanosecond}); err != nil || len(ended) != 0 {
		t.Errorf("expire with a warm session waiting: got %v, %v; want none expired", ended, err)
	}
	st, err := a.sessions.Start(ctx, session.StartOptions{Learner: "alice", Lab: "failover"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.ID != warm || st.Learner != "alice" || st.State != session.Ready || !st.ClusterLive {
		t.Errorf("alice's start: got %s of %s (%s, cluster live %v), want the warm session %s, ready", st.ID, st.Learner, st.State, st.ClusterLive, warm)
	}
	k.Poke()
	next := waitWarm(t, a)
	if next == warm {
		t.Fatalf("the keeper did not prepare a new warm session")
	}
	bob, err := a.sessions.Start(ctx, session.StartOptions{Learner: "bob", Lab: "failover"}, nil)
	if err != nil || bob.ID != next {
		t.Errorf("bob's start: got %v, %v; want the second warm session %s", bob, err, next)
	}
	if len(reported) == 0 {
		t.Error("the keeper reported no pool size")
	}
	// alice's session works: its checks see her cluster.
	if _, err := a.sessions.Chaos(ctx, st.ID, "", nil); err != nil {
		t.Errorf("chaos on the warm session alice got: %v", err)
	}
}

// waitWarm waits for a ready warm failover session and returns its id.
func waitWarm(t *testing.T, a *App) string {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		list, err := a.sessions.Sessions(context.Background(), session.PoolLearner(""))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.State == session.Ready {
				return s.ID
			}
		}
	}
	t.Fatal("no warm session within two minutes")
	return ""
}

// stopAll stops every session of every learner, the pool's included.
func stopAll(t *testing.T, a *App) {
	list, err := a.sessions.Sessions(context.Background(), "")
	if err != nil {
		t.Error(err)
		return
	}
	for _, s := range list {
		if _, err := a.sessions.Stop(context.Background(), s.ID, "the test ended", nil); err != nil {
			t.Errorf("stop %s: %v", s.ID, err)
		}
	}
}
