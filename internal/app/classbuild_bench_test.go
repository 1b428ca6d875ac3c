package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/controllab"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/labs"
)

// BenchmarkClassBuild: ten learners of the write-reconciler lab, each in a
// session of their own on one machine, press "Build and run" with the
// reference solution in the same instant, as a class does when told to.
// Each op is one such press by all ten; the first op is every session's
// first build (its build cache new), the next ones an edit of one line.
//
// None waits for another: one build at a time bursts past its cell's CPU
// cap (session.Options.BuildBursts), the others build at theirs. It
// reports the time from the press to the learner's controller running
// (s-press-p50, s-press-p99, s-first-p50 for the first op's), how many of
// the presses built and ran (built-of-presses, which must be all), and the
// most memory any cell took against its ceiling (MiB-cell-peak-max,
// MiB-cell-limit); a process that ceiling killed, or a start or a build
// the budget refused, fails the benchmark.
//
//	go test -run '^$' -bench '^BenchmarkClassBuild$' -benchtime 3x -count 1 -timeout 60m ./internal/app/
func BenchmarkClassBuild(b *testing.B) {
	const learners = 10
	ctx := context.Background()
	a, err := Open(ctx, Config{DataDir: b.TempDir(), BinDir: clustertest.BinDir(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()

	// The class starts its sessions two at a time, as fast as the machine
	// lets it; the benchmark is of the builds.
	ids := make([]string, learners)
	clusters := make([]string, learners)
	var (
		wg    sync.WaitGroup
		slots = make(chan struct{}, 2)
		errs  = make([]error, learners)
	)
	for i := range learners {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			st, err := a.Start(ctx, session.StartOptions{Learner: fmt.Sprintf("learner%02d", i), Lab: "write-reconciler"}, nil)
			if err != nil {
				errs[i] = fmt.Errorf("learner %d's start: %w", i, err)
				return
			}
			ids[i], clusters[i] = st.ID, st.Cluster
		})
	}
	wg.Wait()
	defer func() {
		for _, id := range ids {
			if id != "" {
				_, _ = a.sessions.Stop(ctx, id, "the benchmark ended", nil)
			}
		}
	}()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}

	base, err := a.Module(ctx, ids[0])
	if err != nil {
		b.Fatal(err)
	}
	sol, err := labs.Solution("write-reconciler")
	if err != nil {
		b.Fatal(err)
	}
	files, err := controllab.Overlay(base, sol)
	if err != nil {
		b.Fatal(err)
	}
	const file = "internal/controller/webapp_controller.go"

	var first, press []time.Duration
	presses, built := 0, 0
	for op := 0; b.Loop(); op++ {
		var (
			mu    sync.Mutex
			took  []time.Duration
			fails []string
			wg    sync.WaitGroup
		)
		for i, id := range ids {
			edited := controllab.Files{}
			for n, d := range files {
				edited[n] = d
			}
			edited[file] = append(slices.Clone(files[file]), fmt.Sprintf("\n// learner %d, press %d\n", i, op)...)
			wg.Go(func() {
				start := time.Now()
				res, err := a.Build(ctx, id, edited, true, nil)
				d := time.Since(start)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					fails = append(fails, fmt.Sprintf("learner %d: %v", i, err))
				case !res.OK || !res.Ran:
					fails = append(fails, fmt.Sprintf("learner %d: built %v, ran %v: %s%s", i, res.OK, res.Ran, res.Error, res.Output))
				default:
					took = append(took, d)
				}
			})
		}
		wg.Wait()
		presses += learners
		built += len(took)
		if len(fails) > 0 {
			b.Fatalf("%d of %d presses did not build and run:\n%v", len(fails), learners, fails)
		}
		if op == 0 {
			first = append(first, took...)
		}
		press = append(press, took...)
	}

	var peak, limit uint64
	for i, name := range clusters {
		u, err := a.clusters.Usage(ctx, name)
		if err != nil {
			b.Fatal(err)
		}
		if u.OOMKills > 0 {
			b.Fatalf("learner %d's cell's memory ceiling (%d MiB) killed %d processes", i, u.MemoryLimit>>20, u.OOMKills)
		}
		peak, limit = max(peak, u.MemoryPeak), u.MemoryLimit
	}
	seconds(b, first, "s-first")
	seconds(b, press, "s-press")
	b.ReportMetric(float64(built)/float64(presses), "built-of-presses")
	b.ReportMetric(float64(peak)/(1<<20), "MiB-cell-peak-max")
	b.ReportMetric(float64(limit)/(1<<20), "MiB-cell-limit")
}

// seconds reports the p50 and p99 of all, in seconds, as unit-p50 and
// unit-p99.
func seconds(b *testing.B, all []time.Duration, unit string) {
	b.Helper()
	b.ReportMetric(percentile(all, 0.5).Seconds(), unit+"-p50")
	b.ReportMetric(percentile(all, 0.99).Seconds(), unit+"-p99")
}
