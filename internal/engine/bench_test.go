package engine

import (
	"context"
	"syscall"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
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

// sessionSettle is how long a new session idles before its CPU is read.
// For about a minute after a start the session still does start-up work
// (informer syncs, garbage collections, the API server's OpenAPI of the new
// CRDs): 20 s after the start it used 5 % of a core, a minute later 2 %. A
// learner's session idles for most of an hour, so the settled figure is the
// one a class costs.
const sessionSettle = 60 * time.Second

// sessionWindow is how long a session's CPU use is measured: a whole
// minute, the period of the API server's slowest housekeeping, so a window
// does not land on or miss it by chance. /proc counts CPU time in
// hundredths of a second; over a minute that rounds to 0.02 % of a core.
const sessionWindow = time.Minute

// BenchmarkSessionIdle starts the failover lab as a learner does (cluster,
// operator, a three-instance PostgresCluster Ready, the first exercise's
// steady state), lets it idle a minute and reports, over the next minute,
// the CPU that every process of the session uses while nobody does
// anything, in percent of one core: %cpu-session in all (and
// millicores-session, the same in thousandths of a core), %cpu-<process>
// for etcd, kube-controlplane, hostpod and pg-operator, and cell, the
// cell's first process, in a cell; and at the end of
// the minute their memory, the sum of their PSS (MiB-pss-session, split
// into MiB-pss-anon and MiB-pss-file, and MiB-pss-<process>). It is what
// every learner of a class costs the machine between commands; the class's
// target is 10 millicores and 250 MiB. A session alone pays its programs'
// file pages whole; in a class they are shared between its sessions.
//
//	go test -run '^$' -bench '^BenchmarkSessionIdle$' -benchtime 1x -count 2 -timeout 30m ./internal/engine/
func BenchmarkSessionIdle(b *testing.B) {
	l := shipped(b, "failover")
	var total float64
	var pss clustertest.PSS
	perProcess := map[string]float64{}
	pssOf := map[string]uint64{}
	for b.Loop() {
		e, c := newEngine(b)
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
		b.StopTimer()
		time.Sleep(sessionSettle)
		pids := sessionProcesses(ctx, b, c)
		before := cpuByName(b, pids)
		t0 := time.Now()
		time.Sleep(sessionWindow)
		window := time.Since(t0)
		for name, used := range cpuByName(b, pids) {
			pct := 100 * (used - before[name]).Seconds() / window.Seconds()
			total += pct
			perProcess[name] += pct
		}
		// In a cell, the cell's first process is the session's too.
		for _, name := range []string{"etcd", "kube-controlplane", "hostpod", "pg-operator"} {
			if _, ok := perProcess[name]; !ok {
				b.Fatalf("session processes: got %v, want etcd, kube-controlplane, hostpod and pg-operator (and cell in a cell)", perProcess)
			}
		}
		for name, p := range pssByName(b, pids) {
			pss = pss.Plus(p)
			pssOf[name] += p.Total
		}
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(total/n, "%cpu-session")
	b.ReportMetric(10*total/n, "millicores-session")
	for name, c := range perProcess {
		b.ReportMetric(c/n, "%cpu-"+name)
	}
	mib := func(bytes uint64) float64 { return float64(bytes) / (1 << 20) / n }
	b.ReportMetric(mib(pss.Total), "MiB-pss-session")
	b.ReportMetric(mib(pss.Anon), "MiB-pss-anon")
	b.ReportMetric(mib(pss.File), "MiB-pss-file")
	for name, m := range pssOf {
		b.ReportMetric(mib(m), "MiB-pss-"+name)
	}
}

// sessionProcesses returns the PIDs of a session's processes: the cluster's
// (etcd, kube-controlplane, and hostpod, the operator's host process) and
// their children (pg-operator, which hostpod runs).
func sessionProcesses(ctx context.Context, b *testing.B, c *clustertest.Cluster) []int {
	s, err := c.Provider.Status(ctx, c.Name)
	if err != nil {
		b.Fatal(err)
	}
	seen := map[int]bool{}
	var pids []int
	for _, comp := range s.Components {
		if seen[comp.PID] {
			continue
		}
		seen[comp.PID] = true
		children, err := clustertest.Children(comp.PID)
		if err != nil {
			b.Fatalf("%s: %v", comp.Name, err)
		}
		pids = append(append(pids, comp.PID), children...)
	}
	return pids
}

// cpuByName sums the CPU time (utime+stime) of processes by command name.
func cpuByName(b *testing.B, pids []int) map[string]time.Duration {
	return byName(b, pids, clustertest.CPUTime, func(a, b time.Duration) time.Duration { return a + b })
}

// pssByName sums the PSS of processes by command name.
func pssByName(b *testing.B, pids []int) map[string]clustertest.PSS {
	return byName(b, pids, clustertest.ReadPSS, clustertest.PSS.Plus)
}

// byName reads each process's figure and adds them up by command name.
func byName[T any](b *testing.B, pids []int, read func(pid int) (T, error), add func(T, T) T) map[string]T {
	out := map[string]T{}
	for _, pid := range pids {
		name, err := clustertest.ProcessName(pid)
		if err != nil {
			b.Fatal(err)
		}
		v, err := read(pid)
		if err != nil {
			b.Fatal(err)
		}
		out[name] = add(out[name], v)
	}
	return out
}

// BenchmarkFailoverCheckCost reports what one Check of the failover lab's
// first exercise costs the machine once its cluster has failed over and
// recovered: the grader's own CPU (this process: the requests, their
// decoding and the judging) and the cluster's (every process of the
// session, the API server answering above all), in CPU-milliseconds a
// Check, with the cluster's idle use over the same time taken off, and its
// time. A class that checks at once shares two cores between thirty of
// these. Side by side on the same cluster: "passes", every goal polled to
// its passes in a row, and "held", the Check of goals the session's
// Watcher has seen hold (CheckOptions.Held), each evaluated once more.
//
//	go test -run '^$' -bench '^BenchmarkFailoverCheckCost$' -benchtime 20x -count 3 ./internal/engine/
func BenchmarkFailoverCheckCost(b *testing.B) {
	l := shipped(b, "failover")
	e, c := newEngine(b)
	ctx := testContext(b, 15*time.Minute)
	if err := e.Setup(ctx, l, nil); err != nil {
		b.Fatal(err)
	}
	a, err := e.Begin(ctx, l, l.Exercises[0].ID)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.Chaos(ctx, l, a, nil); err != nil {
		b.Fatal(err)
	}
	if rep, err := e.Check(ctx, l, a, CheckOptions{Timeout: 2 * time.Minute}); err != nil || !rep.Passed {
		b.Fatalf("goals after the failover: got %v %v, want passed", failed(rep), err)
	}
	pids := sessionProcesses(ctx, b, c)
	clusterCPU := func() time.Duration {
		var sum time.Duration
		for _, t := range cpuByName(b, pids) {
			sum += t
		}
		return sum
	}
	// The cluster's idle use, to take off what it spends meanwhile.
	idleFrom, t0 := clusterCPU(), time.Now()
	time.Sleep(10 * time.Second)
	idle := float64(clusterCPU()-idleFrom) / float64(time.Since(t0))
	for _, held := range []bool{false, true} {
		name := "passes"
		if held {
			name = "held"
		}
		b.Run(name, func(b *testing.B) {
			self, cl, t0 := ownCPU(b), clusterCPU(), time.Now()
			for b.Loop() {
				if rep, err := e.Check(ctx, l, a, CheckOptions{Held: held}); err != nil || !rep.Passed {
					b.Fatalf("check: got %v %v, want passed", failed(rep), err)
				}
			}
			n := float64(b.N)
			took := time.Since(t0)
			used := float64(clusterCPU()-cl) - idle*float64(took)
			b.ReportMetric((ownCPU(b)-self).Seconds()*1000/n, "CPU-ms-grader/check")
			b.ReportMetric(used/float64(time.Millisecond)/n, "CPU-ms-cluster/check")
			b.ReportMetric(float64(took.Milliseconds())/n, "ms/check")
		})
	}
}

// ownCPU is this process's CPU time.
func ownCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
