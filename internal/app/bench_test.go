package app

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/room"
	"oplab.dev/oplab/internal/session"
)

// BenchmarkOpen measures what every CLI command pays before it starts:
// loading and validating the course, opening the store, making the
// provider and the session manager.
func BenchmarkOpen(b *testing.B) {
	dir, bin := b.TempDir(), b.TempDir()
	for b.Loop() {
		a, err := Open(b.Context(), Config{DataDir: dir, BinDir: bin})
		if err != nil {
			b.Fatal(err)
		}
		a.Close()
	}
}

// BenchmarkStartFromWarmPool measures a learner's Start of the failover
// lab when the warm pool has a session ready: the time to hand it over
// (the preparation, a cold start, is outside the timer).
//
//	go test -run '^$' -bench StartFromWarmPool -benchtime 1x -count 5 ./internal/app/
func BenchmarkStartFromWarmPool(b *testing.B) {
	ctx := context.Background()
	a, err := Open(ctx, Config{DataDir: b.TempDir(), BinDir: clustertest.BinDir(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	n := 0
	for b.Loop() {
		b.StopTimer()
		warm, err := a.sessions.Prepare(ctx, "", "failover", nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		n++
		learner := fmt.Sprintf("learner-%d", n)
		b.StartTimer()
		st, err := a.sessions.Start(ctx, session.StartOptions{Learner: learner, Lab: "failover"}, nil)
		b.StopTimer()
		if err != nil || st.ID != warm.ID {
			b.Fatalf("start: got %v, %v; want the warm session %s", st, err, warm.ID)
		}
		if _, err := a.sessions.Stop(ctx, st.ID, "the benchmark ended", nil); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkIdleClusterCost reports what admission measures one idle
// failover session's cluster to cost (its processes' PSS and CPU over ten
// seconds, through room.Meter): the figures a start is admitted on.
// The time per op is of no interest.
//
//	go test -run '^$' -bench IdleClusterCost -benchtime 1x -count 3 ./internal/app/
func BenchmarkIdleClusterCost(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	a, err := Open(ctx, Config{DataDir: dir, BinDir: clustertest.BinDir(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	st, err := a.Start(ctx, session.StartOptions{Learner: "alice", Lab: "failover"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer a.sessions.Stop(ctx, st.ID, "the benchmark ended", nil)
	m, err := room.NewMeter(room.MeterOptions{ClusterDir: filepath.Join(dir, "clusters")})
	if err != nil {
		b.Fatal(err)
	}
	var c room.Cost
	for b.Loop() {
		time.Sleep(5 * time.Second) // past the start's last work
		if _, err := m.Clusters(ctx); err != nil {
			b.Fatal(err)
		}
		time.Sleep(10 * time.Second) // the window CPU is measured over
		per, err := m.Clusters(ctx)
		if err != nil || len(per) != 1 {
			b.Fatalf("got clusters %v, %v; want alice's", per, err)
		}
		for _, x := range per {
			c = x
		}
	}
	b.ReportMetric(float64(c.Memory)/room.MiB, "MiB/cluster")
	b.ReportMetric(c.CPU*1000, "millicores/cluster")
}

// BenchmarkKindPodsSession measures a learner's Start of the failover lab
// on the pods provider, on a kind host: cold (a cell made, the operator
// installed in it, the lab's objects ready: s/cold) and from the warm pool
// (a session prepared beforehand handed over: s/warm). Gated like the
// kind tests; each run makes its own host.
//
//	OPLAB_KIND_TEST=1 go test -run '^$' -bench KindPodsSession -benchtime 1x -count 3 ./internal/app/
func BenchmarkKindPodsSession(b *testing.B) {
	ctx := context.Background()
	for range b.N {
		_, host, _ := clustertest.NewPodsProvider(b)
		a, err := Open(ctx, Config{DataDir: b.TempDir(), BinDir: clustertest.BinDir(b), Provider: cluster.ProviderPods,
			Pods: PodsHost{Kubeconfig: host.Kubeconfig, Namespace: clustertest.PodsNamespace, Reach: cluster.PodsReachPortForward}})
		if err != nil {
			b.Fatal(err)
		}
		defer a.Close()
		stop := func(id string) {
			if _, err := a.sessions.Stop(ctx, id, "the benchmark ended", nil); err != nil {
				b.Error(err)
			}
		}
		start := time.Now()
		cold, err := a.sessions.Start(ctx, session.StartOptions{Learner: "cold", Lab: "failover"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		coldTook := time.Since(start)
		stop(cold.ID)
		warm, err := a.sessions.Prepare(ctx, "", "failover", nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		st, err := a.sessions.Start(ctx, session.StartOptions{Learner: "warm", Lab: "failover"}, nil)
		if err != nil || st.ID != warm.ID {
			b.Fatalf("start: got %v, %v; want the warm session %s", st, err, warm.ID)
		}
		warmTook := time.Since(start)
		stop(st.ID)
		b.ReportMetric(coldTook.Seconds(), "s/cold")
		b.ReportMetric(warmTook.Seconds(), "s/warm")
	}
}
