package app

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/procfs"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/room"
	"oplab.dev/oplab/internal/session"
)

// BenchmarkWake measures a sleeping failover session woken by its
// learner's next request (App.Wake, what a page or a command does first):
// from memory (its cell frozen: ms-frozen) and from disk (its cell stopped
// and started again from its directory: ms-stopped), p50 and p99 over the
// runs, and what the session costs while it sleeps frozen, measured as
// admission measures a cluster (room.Meter: the CPU of its processes over
// ten seconds, and their PSS): the targets are under 2 s from memory,
// under 5 s from disk, and 0 millicores asleep. It also reports what a
// wake from disk costs the machine, counted to 5 s after it returned, as
// BenchmarkStartCost counts a start: CPU-s/wake-stopped in all,
// CPU-s-wake-oplab for the server's own process and CPU-s-wake-<process>
// for each of the session's processes, every one of which the wake
// started. Thirty learners coming back within a minute is thirty of
// them beside thirty awake clusters (BenchmarkSixtySessions).
//
//	go test -run '^$' -bench Wake -benchtime 10x -count 1 ./internal/app/
func BenchmarkWake(b *testing.B) {
	ctx := context.Background()
	a, dir := openSleeping(b, Admission{})
	st, err := a.Start(ctx, session.StartOptions{Learner: "alice", Lab: "failover"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer a.sessions.Stop(ctx, st.ID, "the benchmark ended", nil)
	m, err := room.NewMeter(room.MeterOptions{ClusterDir: filepath.Join(dir, "clusters")})
	if err != nil {
		b.Fatal(err)
	}
	// sleep puts the session to sleep as housekeeping does once nobody
	// looked at it for long enough, here at once.
	sleep := func(o session.SleepOptions) {
		b.Helper()
		if slept, err := a.sessions.Sleep(ctx, o); err != nil || len(slept) != 1 {
			b.Fatalf("sleep: %v, %v; want the session asleep", slept, err)
		}
	}
	wake := func() time.Duration {
		b.Helper()
		began := time.Now()
		s, err := a.Wake(ctx, st.ID, nil)
		took := time.Since(began)
		if err != nil || s.Asleep != nil {
			b.Fatalf("wake: %v (asleep %+v)", err, s)
		}
		return took
	}
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		b.Fatal(err)
	}
	clusters := filepath.Join(dir, "clusters")
	var frozen, stopped []time.Duration
	var asleep room.Cost
	var wakeCPU float64
	wakePer := map[string]float64{}
	for b.Loop() {
		time.Sleep(5 * time.Second) // past the last wake's work
		sleep(session.SleepOptions{Freeze: time.Nanosecond})
		if asleep.Clusters == 0 {
			if _, err := m.Clusters(ctx); err != nil {
				b.Fatal(err)
			}
			time.Sleep(10 * time.Second)
			per, err := m.Clusters(ctx)
			if err != nil || len(per) != 1 {
				b.Fatalf("got clusters %v, %v; want alice's", per, err)
			}
			for _, c := range per {
				asleep, asleep.Clusters = c, 1
			}
		}
		frozen = append(frozen, wake())
		time.Sleep(5 * time.Second)
		sleep(session.SleepOptions{Freeze: time.Nanosecond, Stop: time.Nanosecond})
		before := ownCPU(b)
		stopped = append(stopped, wake())
		time.Sleep(5 * time.Second) // the woken cluster's informers and the operator's first passes
		self := ownCPU(b) - before
		wakeCPU += self
		wakePer["oplab"] += self
		wakeCPU += clusterCPU(b, fs, clusters, wakePer)
	}
	reportQuantiles(b, frozen, "ms-frozen")
	reportQuantiles(b, stopped, "ms-stopped")
	b.ReportMetric(asleep.CPU*1000, "millicores/asleep")
	b.ReportMetric(float64(asleep.Memory)/room.MiB, "MiB/asleep")
	if n := float64(len(stopped)); n > 0 {
		b.ReportMetric(wakeCPU/n, "CPU-s/wake-stopped")
		for name, c := range wakePer {
			b.ReportMetric(c/n, "CPU-s-wake-"+name)
		}
	}
}

// openSleeping opens an App admitting starts by ad in a new data
// directory, closed when b ends, and skips b on a machine whose clusters
// cannot sleep.
func openSleeping(b *testing.B, ad Admission) (*App, string) {
	b.Helper()
	dir := b.TempDir()
	// OPLAB_BENCH_LOG=1 shows the server's log (admissions, rooms made,
	// wakes, each with its time) on stderr; =debug, each queued decision's
	// reason too.
	log := slog.New(slog.DiscardHandler)
	if v := os.Getenv("OPLAB_BENCH_LOG"); v != "" {
		level := slog.LevelInfo
		if v == "debug" {
			level = slog.LevelDebug
		}
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	a, err := Open(context.Background(), Config{DataDir: dir, BinDir: clustertest.BinDir(b), Admission: ad, Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	if !a.clusters.Info().Capabilities.Sleeps {
		b.Skip("this machine's clusters cannot sleep: no cell with a control group (see docs/security.md, the budget)")
	}
	return a, dir
}

// reportQuantiles reports the p50 and p99 of all, in milliseconds, as
// unit-p50 and unit-p99.
func reportQuantiles(b *testing.B, all []time.Duration, unit string) {
	b.Helper()
	if len(all) == 0 {
		return
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(percentile(all, 0.5)), unit+"-p50")
	b.ReportMetric(ms(percentile(all, 0.99)), unit+"-p99")
}
