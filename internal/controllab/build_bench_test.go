package controllab_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/controllab"
	"oplab.dev/oplab/labs"
)

// BenchmarkControllerBuild times a learner's build of the write-reconciler
// lab's reference solution in their cell, with the kit `make kit` made:
//
//   - first: the first build of a session (its build cache new, linked to
//     the kit's warm one), as after `make`: ms-p50, ms-p99;
//   - edit: a one-line edit of the controller built again: ms-p50, ms-p99;
//
// and the most memory the cell took, its cluster's processes and the
// builds together (MiB-cell-peak, memory.peak of its control group); a
// build the cell's memory ceiling killed fails the benchmark. capped is
// a cell as a session's is once set up, under its CPU cap; uncapped one
// left unsettled, as during a start: what the cap costs a build; burst a
// settled cell whose cap each build lifts and puts back, as a session's
// build does while one of its Manager's bursts is free
// (session.Options.BuildBursts).
//
//	go test -run '^$' -bench '^BenchmarkControllerBuild$' -benchtime 5x -count 1 ./internal/controllab/
func BenchmarkControllerBuild(b *testing.B) {
	b.Run("capped", func(b *testing.B) { benchmarkBuild(b, false) })
	b.Run("uncapped", func(b *testing.B) { benchmarkBuild(b, false, cluster.CreateUnsettled()) })
	b.Run("burst", func(b *testing.B) { benchmarkBuild(b, true) })
}

// BenchmarkControllerBuildOnKind times the same builds where the cluster
// is kind's, each build a pod of the cluster (the kind provider's
// workshop.go): ms-first and ms-edit as above; the node's memory is not
// measured. capped is a node under its CPU cap (budget.Kind's core), as a
// session's is once set up; burst one whose cap each build lifts and puts
// back, as a session's build does while a burst is free.
//
//	OPLAB_KIND_TEST=1 go test -run '^$' -bench '^BenchmarkControllerBuildOnKind$' -benchtime 5x -count 1 ./internal/controllab/
//
// (after `eval "$(make -s kind-env)"` and `make images`).
func BenchmarkControllerBuildOnKind(b *testing.B) {
	b.Run("capped", func(b *testing.B) { benchmarkBuildIn(b, clustertest.NewKind(b), false) })
	b.Run("burst", func(b *testing.B) { benchmarkBuildIn(b, clustertest.NewKind(b), true) })
}

func benchmarkBuild(b *testing.B, burst bool, opts ...cluster.CreateOption) {
	p, data := clustertest.NewProvider(b)
	benchmarkBuildIn(b, clustertest.Create(b, p, data, clustertest.UniqueName("build"), opts...), burst)
}

func benchmarkBuildIn(b *testing.B, c *clustertest.Cluster, burst bool) {
	k, err := controllab.FindKit(clustertest.BinDir(b))
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	dir := b.TempDir()
	mod, err := labs.Module("write-reconciler")
	if err != nil {
		b.Fatal(err)
	}
	if err := controllab.WriteModule(dir, mod, k); err != nil {
		b.Fatal(err)
	}
	base, err := controllab.ReadDir(dir)
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
	ws, err := c.Provider.Workspace(ctx, c.Name)
	if err != nil {
		b.Fatal(err)
	}
	bl := controllab.Builder{Kit: k, Cells: c.Provider, Cluster: c.Name}
	build := func(f controllab.Files) *controllab.Build {
		b.Helper()
		if burst {
			if _, err := c.Provider.Unsettle(ctx, c.Name); err != nil {
				b.Fatal(err)
			}
			defer func() {
				if err := c.Provider.Settle(ctx, c.Name); err != nil {
					b.Fatal(err)
				}
			}()
		}
		res, err := bl.Build(ctx, f)
		if err != nil {
			b.Fatal(err)
		}
		if !res.OK {
			b.Fatalf("the solution does not build:\n%s", res.Output)
		}
		return res
	}
	const file = "internal/controller/webapp_controller.go"
	var first, edit []time.Duration
	b.ResetTimer()
	for i := range b.N {
		if err := os.RemoveAll(filepath.Join(ws, "gocache")); err != nil {
			b.Fatal(err)
		}
		res := build(files)
		first = append(first, res.Took)
		edited := controllab.Files{}
		for n, d := range files {
			edited[n] = d
		}
		edited[file] = append(slices.Clone(files[file]), fmt.Sprintf("\n// edit %d\n", i)...)
		res = build(edited)
		edit = append(edit, res.Took)
	}
	b.StopTimer()
	quantiles(b, first, "ms-first")
	quantiles(b, edit, "ms-edit")
	u, err := c.Provider.Usage(ctx, c.Name)
	if errors.Is(err, cluster.ErrUnsupported) {
		return // a kind node's memory is the engine's
	} else if err != nil {
		b.Fatal(err)
	}
	if u.OOMKills > 0 {
		b.Fatalf("the cell's memory ceiling (%d MiB) killed %d processes during the builds", u.MemoryLimit>>20, u.OOMKills)
	}
	b.ReportMetric(float64(u.MemoryPeak)/(1<<20), "MiB-cell-peak")
	b.ReportMetric(float64(u.MemoryLimit)/(1<<20), "MiB-cell-limit")
	b.ReportMetric(float64(u.CPULimit), "millicores-cap")
}

// quantiles reports the p50 and p99 of all, in milliseconds, as unit-p50
// and unit-p99.
func quantiles(b *testing.B, all []time.Duration, unit string) {
	b.Helper()
	slices.Sort(all)
	q := func(p float64) float64 {
		i := int(p*float64(len(all))+0.999999) - 1
		return float64(all[max(i, 0)].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.5), unit+"-p50")
	b.ReportMetric(q(0.99), unit+"-p99")
}
