package app

import (
	"context"
	"slices"
	"testing"
	"time"

	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// TestClassPool, on real clusters: a class that keeps one warm failover
// session gets one; its member's start takes it (ready, theirs, set up),
// the pool refills; closing the class stops its warm sessions and deletes
// their clusters, and the member's own session stays.
func TestClassPool(t *testing.T) {
	ctx := context.Background()
	a, err := Open(ctx, Config{DataDir: t.TempDir(), BinDir: clustertest.BinDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	t.Cleanup(func() { stopAll(t, a) })
	if err := a.store.CreateInstructor(ctx, &store.Instructor{Name: "ada", PasswordHash: "$argon2id$unused"}); err != nil {
		t.Fatal(err)
	}
	ada := class.Actor{Name: "ada"}
	c, err := a.classes.Create(ctx, ada, class.Spec{Name: "morning", Labs: []string{"failover"}, Warm: map[string]int{"failover": 1}})
	if err != nil {
		t.Fatal(err)
	}
	alice, err := a.classes.Join(ctx, "10.0.0.1", c.JoinCode, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	pools := a.ClassPools(PoolOptions{Every: 100 * time.Millisecond})
	pools.Start(ctx, time.Hour) // only pokes move it
	t.Cleanup(pools.Stop)

	pool := session.PoolLearner(ClassPool(c.ID))
	warm := waitPool(t, a, pool, "")
	st, err := a.Start(ctx, session.StartOptions{Learner: alice.Learner, Lab: "failover"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.ID != warm || st.Learner != alice.Learner || st.State != session.Ready || !st.ClusterLive {
		t.Errorf("alice's start: got %s of %s (%s, cluster live %v), want her class's warm session %s, ready", st.ID, st.Learner, st.State, st.ClusterLive, warm)
	}
	next := waitPool(t, a, pool, warm)

	if _, err := a.classes.Close(ctx, ada, "morning"); err != nil {
		t.Fatal(err)
	}
	pools.Poke()
	waitFor(t, "the closed class's pool is drained", func() bool { return len(pools.Pools()) == 0 && len(liveOf(t, a, pool)) == 0 })
	nst, err := a.sessions.Status(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if nst.State.Active() || nst.ClusterLive {
		t.Errorf("the refilled warm session after the close: got %s, cluster live %v; want stopped, no cluster", nst.State, nst.ClusterLive)
	}
	clusters, err := a.clusters.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cl := range clusters {
		names = append(names, cl.Name)
	}
	if !slices.Equal(names, []string{st.Cluster}) {
		t.Errorf("clusters after the close: got %v, want only alice's %s", names, st.Cluster)
	}
}

// waitPool waits for a ready session of pool other than not.
func waitPool(t *testing.T, a *App, pool, not string) string {
	t.Helper()
	var id string
	waitFor(t, "a warm session of "+pool, func() bool {
		for _, s := range liveOf(t, a, pool) {
			if s.State == session.Ready && s.ID != not {
				id = s.ID
				return true
			}
		}
		return false
	})
	return id
}

// liveOf lists learner's live sessions.
func liveOf(t *testing.T, a *App, learner string) []session.Summary {
	t.Helper()
	list, err := a.sessions.Sessions(context.Background(), learner)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(list, func(s session.Summary) bool { return !s.State.Active() })
}
