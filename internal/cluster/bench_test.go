package cluster_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// idleSettle is how long a new cluster idles before its memory and CPU are
// read: long enough for start-up work (informer syncs, first GC cycles) to
// finish.
const idleSettle = 20 * time.Second

// BenchmarkClusterCreate creates one cluster per iteration and reports the
// time from Create to usable (s/ready), the summed RSS of its processes once
// idle (MiB-rss, one metric per component, and MiB-anon, the private part
// that every further cluster adds; code pages are shared), its idle CPU use
// (%cpu-idle, percent of one core, and %cpu-<process> per process) and how
// often its threads are scheduled idle (wakes/s-<process>: context
// switches a second, the periodic work that costs CPU on a busy machine
// beyond its own run time).
// `make bench` prints medians over runs. internal/engine's
// BenchmarkSessionIdle adds the operator: a whole session's idle CPU.
func BenchmarkClusterCreate(b *testing.B) {
	p, _ := clustertest.NewProvider(b)
	ctx := context.Background()
	var ready, rss, anon, cpu float64
	perProcess, cpuPerProcess, wakesPerProcess := map[string]float64{}, map[string]float64{}, map[string]float64{}
	for i := 0; b.Loop(); i++ {
		name := "bench-" + strconv.Itoa(i)
		start := time.Now()
		if err := p.Create(ctx, name); err != nil {
			b.Fatal(err)
		}
		ready += time.Since(start).Seconds()
		b.StopTimer()
		time.Sleep(idleSettle)
		s, err := p.Status(ctx, name)
		if err != nil || s.State != cluster.StateRunning {
			b.Fatalf("cluster after idling: %v %v", s.State, err)
		}
		before, switched := cpuTimes(b, s), contextSwitches(b, s)
		t0 := time.Now()
		time.Sleep(5 * time.Second)
		window := time.Since(t0)
		for name, used := range cpuTimes(b, s) {
			pct := 100 * (used - before[name]).Seconds() / window.Seconds()
			cpu += pct
			cpuPerProcess[name] += pct
		}
		for name, n := range contextSwitches(b, s) {
			wakesPerProcess[name] += float64(n-switched[name]) / window.Seconds()
		}
		for _, c := range processes(s) {
			m := memMiB(b, c.PID, "VmRSS:")
			rss += m
			anon += memMiB(b, c.PID, "RssAnon:")
			perProcess[c.Process] += m
		}
		if err := p.Delete(ctx, name); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(ready/n, "s/ready")
	b.ReportMetric(rss/n, "MiB-rss")
	b.ReportMetric(anon/n, "MiB-anon")
	b.ReportMetric(cpu/n, "%cpu-idle")
	for name, m := range perProcess {
		b.ReportMetric(m/n, "MiB-"+name)
	}
	for name, c := range cpuPerProcess {
		b.ReportMetric(c/n, "%cpu-"+name)
	}
	for name, w := range wakesPerProcess {
		b.ReportMetric(w/n, "wakes/s-"+name)
	}
}

// BenchmarkClusterCreateFirst measures the first Create with an empty
// cache directory, which makes the cluster seed before the cluster
// (s/first-create): what the first cluster after a build of the control
// plane costs.
func BenchmarkClusterCreateFirst(b *testing.B) {
	ctx := context.Background()
	var total float64
	for i := 0; b.Loop(); i++ {
		p, err := cluster.NewProvider(cluster.ProviderWithEmbeddedOptions(cluster.EmbeddedOptions{
			BinDir: clustertest.BinDir(b), DataDir: b.TempDir(), CacheDir: b.TempDir(),
		}))
		if err != nil {
			b.Fatal(err)
		}
		name := "first-" + strconv.Itoa(i)
		start := time.Now()
		if err := p.Create(ctx, name); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start).Seconds()
		b.StopTimer()
		if err := p.Delete(ctx, name); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(total/float64(b.N), "s/first-create")
}

// processes returns one component per process of the cluster: components
// sharing a process share its memory and CPU time.
func processes(s cluster.Status) []cluster.ComponentStatus {
	seen := map[int]bool{}
	var out []cluster.ComponentStatus
	for _, c := range s.Components {
		if !seen[c.PID] {
			seen[c.PID] = true
			out = append(out, c)
		}
	}
	return out
}

// cpuTimes returns the CPU time (utime+stime) each process of the cluster
// has used, by process name.
func cpuTimes(b *testing.B, s cluster.Status) map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, c := range processes(s) {
		t, err := clustertest.CPUTime(c.PID)
		if err != nil {
			b.Fatalf("%s: %v", c.Name, err)
		}
		out[c.Process] += t
	}
	return out
}

// contextSwitches sums, per process of s, the context switches of all its
// threads (voluntary and not, from /proc/<pid>/task/*/status): each is a
// thread put to sleep or woken.
func contextSwitches(b *testing.B, s cluster.Status) map[string]int64 {
	out := map[string]int64{}
	for _, c := range processes(s) {
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(c.PID) + "/task")
		if err != nil {
			b.Fatalf("%s: %v", c.Name, err)
		}
		for _, t := range tasks {
			data, err := os.ReadFile("/proc/" + strconv.Itoa(c.PID) + "/task/" + t.Name() + "/status")
			if err != nil {
				continue // the thread ended
			}
			for _, line := range strings.Split(string(data), "\n") {
				if name, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(name, "ctxt_switches") {
					n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
					out[c.Process] += n
				}
			}
		}
	}
	return out
}

// memMiB reads a memory figure of /proc/<pid>/status: VmRSS (resident set)
// or RssAnon (its private part; the rest is the binary's code, shared by
// every cluster).
func memMiB(b *testing.B, pid int, field string) float64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	b.Fatalf("no %s for pid %d", field, pid)
	return 0
}
