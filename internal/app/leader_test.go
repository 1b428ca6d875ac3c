package app

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestOneReplicaLeads runs two serving Apps as two replicas electing their
// leader with a Lease on a real API server: exactly one does the
// background work, the Lease names it, and when it stops the other takes
// over.
func TestOneReplicaLeads(t *testing.T) {
	host := clustertest.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	serve := func(id string) *Runtime {
		a, err := Open(ctx, Config{DataDir: t.TempDir(), BinDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		r, err := a.Serve(ctx, RuntimeOptions{Leader: &LeaderOptions{
			Config: host.Config, Namespace: "default", Name: "oplab-background", Identity: id,
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 250 * time.Millisecond,
		}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	replicas := map[string]*Runtime{"one": serve("one"), "two": serve("two")}
	leader := func() (string, int) {
		n, who := 0, ""
		for id, r := range replicas {
			if r.Leading() {
				n, who = n+1, id
			}
		}
		return who, n
	}
	holder := func() string {
		l, err := host.Client.CoordinationV1().Leases("default").Get(ctx, "oplab-background", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	var first string
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		who, n := leader()
		first = who
		return n == 1 && holder() == who, nil
	}); err != nil {
		t.Fatalf("no single leader named by the Lease: leading %q, Lease holder %q", first, holder())
	}
	// Through several renewals, still one.
	for range 10 {
		time.Sleep(300 * time.Millisecond)
		if who, n := leader(); n != 1 || who != first {
			t.Fatalf("leaders: %d (%q), want only %q", n, who, first)
		}
	}
	// The leader stops (a replica's pod deleted): it gives the Lease up,
	// and the other takes the work.
	start := time.Now()
	if err := replicas[first].Close(); err != nil {
		t.Fatal(err)
	}
	delete(replicas, first)
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		who, n := leader()
		return n == 1 && who != first && holder() == who, nil
	}); err != nil {
		t.Fatalf("the other replica did not take over: Lease holder %q", holder())
	}
	t.Logf("the other replica leads %s after the leader stopped", time.Since(start).Round(time.Millisecond))
	for _, r := range replicas {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}
}
