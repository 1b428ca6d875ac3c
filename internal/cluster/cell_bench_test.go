package cluster_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// BenchmarkCellCost measures what a cell costs, side by side: clusters made
// in cells and without, one after the other in each iteration, each
// reporting its time from Create to usable (s/ready-cell, s/ready-none)
// and, once idle, the summed PSS of every process of the cluster
// (MiB-pss-cell, MiB-pss-none). With a cell those include bwrap, the
// cell's first process and the nsenter that runs each program.
// `make bench` prints medians over runs.
func BenchmarkCellCost(b *testing.B) {
	ctx := context.Background()
	modes := []struct {
		name    string
		confine cluster.Confinement
	}{{"cell", cluster.ConfineRequired}, {"none", cluster.ConfineOff}}
	provs := map[string]*cluster.Provider{}
	dirs := map[string]string{}
	for _, m := range modes {
		data := b.TempDir()
		p, err := cluster.NewProvider(cluster.ProviderWithEmbeddedOptions(cluster.EmbeddedOptions{
			BinDir: clustertest.BinDir(b), DataDir: data, Confine: m.confine,
		}))
		if err != nil {
			b.Fatal(err)
		}
		provs[m.name], dirs[m.name] = p, data
	}
	ready, pss := map[string]float64{}, map[string]float64{}
	for i := 0; b.Loop(); i++ {
		for _, m := range modes {
			name := "cost-" + m.name + "-" + strconv.Itoa(i)
			start := time.Now()
			if err := provs[m.name].Create(ctx, name); err != nil {
				b.Fatal(err)
			}
			ready[m.name] += time.Since(start).Seconds()
			b.StopTimer()
			time.Sleep(idleSettle)
			pss[m.name] += clusterPSS(b, filepath.Join(dirs[m.name], "clusters", name))
			if err := provs[m.name].Delete(ctx, name); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	n := float64(b.N)
	for _, m := range modes {
		b.ReportMetric(ready[m.name]/n, "s/ready-"+m.name)
		b.ReportMetric(pss[m.name]/n, "MiB-pss-"+m.name)
	}
}

// clusterPSS sums the proportional set size of every process marked as
// the cluster's in dir (the marker every cluster process carries in its
// environment), in MiB.
func clusterPSS(b *testing.B, dir string) float64 {
	marker := []byte("OPLAB_CLUSTER_DIR=" + dir + "\x00")
	entries, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	var kb, procs float64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(env, 0), marker) {
			continue
		}
		rollup, err := os.ReadFile("/proc/" + e.Name() + "/smaps_rollup")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(rollup), "\n") {
			if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
				v, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
				kb += v
				procs++
			}
		}
	}
	if procs == 0 {
		b.Fatalf("no process of the cluster in %s", dir)
	}
	return kb / 1024
}
