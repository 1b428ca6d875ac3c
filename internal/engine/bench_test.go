package engine

import (
	"testing"
	"time"
)

// BenchmarkCheckPassingExercise times a full `check` of an exercise whose
// state is already right: every goal polled to its consecutive passes
// (target < 1 s). The exercise is operator-basics/create-cluster after its
// reference solution: four objects, three ready replicas, Ready=True.
func BenchmarkCheckPassingExercise(b *testing.B) {
	e, _ := newEngine(b)
	l := shipped(b, "operator-basics")
	ctx := testContext(b, 5*time.Minute)
	if err := e.Setup(ctx, l, nil); err != nil {
		b.Fatal(err)
	}
	a, err := e.Begin(ctx, l, "create-cluster")
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Solve(ctx, l, a, nil); err != nil {
		b.Fatal(err)
	}
	if rep, err := e.Check(ctx, l, a, CheckOptions{}); err != nil || !rep.Passed {
		b.Fatalf("goals after the solution: got %v %v, want passed", failed(rep), err)
	}
	b.ResetTimer()
	for b.Loop() {
		rep, err := e.Check(ctx, l, a, CheckOptions{})
		if err != nil || !rep.Passed {
			b.Fatalf("check: got %v %v, want passed", failed(rep), err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/check")
}

// BenchmarkLabStartToFirstExercise times what a learner waits for after
// `oplab lab start failover` on a cold embedded cluster: the cluster is
// created, the operator installed, a three-instance PostgresCluster made
// Ready, and the first exercise's steady state passes (target < 8 s).
func BenchmarkLabStartToFirstExercise(b *testing.B) {
	l := shipped(b, "failover")
	var total time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		e, _ := newEngine(b)
		cluster := time.Since(start)
		ctx := testContext(b, 5*time.Minute)
		if err := e.Setup(ctx, l, nil); err != nil {
			b.Fatal(err)
		}
		a, err := e.Begin(ctx, l, l.Exercises[0].ID)
		if err != nil {
			b.Fatal(err)
		}
		if rep, err := e.SteadyState(ctx, l, a, CheckOptions{}); err != nil || !rep.Passed {
			b.Fatalf("steady state: got %v %v, want passed", failed(rep), err)
		}
		d := time.Since(start)
		total += d
		b.ReportMetric(cluster.Seconds(), "s/cluster")
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/start")
}
