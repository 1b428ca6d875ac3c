package room

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/procfs"
)

// child runs a command with the cluster marker dir in its environment
// (none when dir is empty) until the test ends.
func child(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if dir != "" {
		cmd.Env = append(cmd.Env, MarkerVar+"="+dir)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
}

// waitEnv waits until every child shows its marker in /proc (the kernel
// lets the parent go on before the child's exec has laid out its
// environment).
func waitClusters(t *testing.T, m *Meter, want int) map[string]Cost {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := m.Clusters(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == want || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMeterClustersFromProc(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "clusters")
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	child(t, a, "sleep", "60")
	child(t, a, "sleep", "60")
	child(t, b, "sh", "-c", "while :; do :; done") // a busy cluster
	child(t, filepath.Join(root, "elsewhere", "c"), "sleep", "60")
	child(t, "", "sleep", "60")
	m, err := NewMeter(MeterOptions{ClusterDir: dir, Settling: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	waitClusters(t, m, 2)
	time.Sleep(time.Second) // a window to measure CPU over
	got, err := m.Clusters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("got clusters %v, want a and b only", got)
	}
	for _, d := range []string{a, b} {
		if got[d].Memory == 0 {
			t.Errorf("cluster %s: got memory 0, want its processes' PSS", d)
		}
	}
	if got[a].CPU > 0.2 {
		t.Errorf("sleeping cluster a: got %.2f cores, want about 0", got[a].CPU)
	}
	// A shared machine gives the busy loop what it can spare: some of a
	// core, and clearly more than the sleepers.
	if got[b].CPU < 0.01 || got[b].CPU <= got[a].CPU {
		t.Errorf("busy cluster b: got %.2f cores (a: %.2f), want clearly more than a", got[b].CPU, got[a].CPU)
	}
	c, err := m.Cost(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Sampled again, so not to the byte what got says.
	if hi := max(got[a].Memory, got[b].Memory); c.Clusters != 2 || c.Memory < hi/2 || c.Memory > 2*hi {
		t.Errorf("got cost %+v, want about the upper median of 2 clusters %v", c, got)
	}
}

// TestMeterCostLeavesOutSettling: a cluster still settling (younger than
// Settling) does not pass for what a cluster costs, even when it is one of
// two; with every cluster settling, the cost is the assumed one.
func TestMeterCostLeavesOutSettling(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "clusters")
	settled, starting := filepath.Join(dir, "settled"), filepath.Join(dir, "starting")
	// The two clusters start gap apart, and the settling time asked for
	// lies halfway between their ages whenever it is asked: a loaded machine
	// may take a second or two to measure without moving either across it.
	const gap = 4 * time.Second
	t0 := time.Now()
	child(t, settled, "sleep", "60")
	time.Sleep(gap)
	child(t, starting, "sh", "-c", "while :; do :; done") // a start: busy
	between := func() time.Duration { return time.Since(t0) - gap/2 }
	meter := func(settling time.Duration) *Meter {
		m, err := NewMeter(MeterOptions{ClusterDir: dir, Settling: settling})
		if err != nil {
			t.Fatal(err)
		}
		waitClusters(t, m, 2)
		time.Sleep(300 * time.Millisecond) // a window to measure CPU over
		return m
	}
	cost := func(m *Meter) Cost {
		c, err := m.Cost(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	all := cost(meter(time.Nanosecond))
	if all.Clusters != 2 || all.CPU < 0.01 {
		t.Fatalf("every cluster counted: got %+v, want 2 clusters at the busy one's CPU (the upper median)", all)
	}
	if c := cost(meter(between())); c.Clusters != 1 || c.CPU > 0.2 || c.CPU >= all.CPU {
		t.Errorf("the starting cluster left out: got %+v, want the settled cluster alone, about 0 cores", c)
	}
	if c := cost(meter(time.Hour)); c != DefaultAssumed {
		t.Errorf("every cluster settling: got %+v, want the assumed %+v", c, DefaultAssumed)
	}
}

func TestMeterAssumedWithNoCluster(t *testing.T) {
	t.Parallel()
	m, err := NewMeter(MeterOptions{ClusterDir: filepath.Join(t.TempDir(), "clusters")})
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.Cost(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultAssumed
	if c != want {
		t.Errorf("got %+v, want the assumed %+v", c, want)
	}
}

func TestMeterHeadroomFromProc(t *testing.T) {
	t.Parallel()
	m, err := NewMeter(MeterOptions{ClusterDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Headroom(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		t.Fatal(err)
	}
	mi, err := fs.Meminfo()
	if err != nil {
		t.Fatal(err)
	}
	if h.MemAvailable == 0 || h.MemAvailable > *mi.MemTotalBytes {
		t.Errorf("got MemAvailable %d, want between 0 and MemTotal %d", h.MemAvailable, *mi.MemTotalBytes)
	}
	if h.Cores < 1 || h.IdleCores < 0 || h.IdleCores > float64(h.Cores) {
		t.Errorf("got %.2f idle of %d cores, want between 0 and all", h.IdleCores, h.Cores)
	}
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		t.Logf("no smaps_rollup: memory is RSS")
	}
}
