package room

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// Meter measures the machine's headroom and what each live cluster costs,
// from /proc. A cluster's processes are found by the variable the embedded
// provider puts in each of their environments (MarkerVar), whose value is
// the cluster's state directory; only clusters under ClusterDir count, so
// another oplab's clusters on the same machine do not.
type Meter struct {
	fs         procfs.FS
	clusterDir string
	assumed    Cost
	costEvery  time.Duration
	settling   time.Duration

	mu     sync.Mutex
	cpu    []cpuSample        // the machine's CPU counters over the window
	procs  map[int]procSample // each cluster process's CPU time last sampled
	cost   Cost               // the last measured cost
	costAt time.Time          // when it was measured
}

// MarkerVar names the variable in the environment of every process of an
// embedded cluster that holds the cluster's state directory.
const MarkerVar = "OPLAB_CLUSTER_DIR"

// MeterOptions configure a Meter.
type MeterOptions struct {
	// Proc is the proc file system's mount point; "/proc" when empty.
	Proc string
	// ClusterDir holds the clusters' state directories (the embedded
	// provider's DATA/clusters).
	ClusterDir string
	// Assumed is the cost used while no cluster is live to measure;
	// DefaultAssumed when zero.
	Assumed Cost
	// CostEvery is how long a measured cost is reused: reading every
	// cluster process's memory map is not free. DefaultCostEvery when zero.
	CostEvery time.Duration
	// Settling is how long after its first process started a cluster is
	// still settling (its lab being set up, its controllers' first syncs):
	// Cost leaves it out of the typical cost. DefaultSettling when zero.
	Settling time.Duration
}

// DefaultAssumed is the cost of a cluster before one was measured: an
// idle failover session's embedded cluster with its operator, measured
// with this Meter on a 2-core machine (366-383 MiB PSS, 50-53
// millicores: BenchmarkIdleClusterCost in internal/app), rounded up.
var DefaultAssumed = Cost{Memory: 400 * MiB, CPU: 0.06}

// DefaultCostEvery is how long a measured cluster cost is reused.
const DefaultCostEvery = 5 * time.Second

// DefaultSettling is how long a new cluster's cost is not taken for what a
// cluster costs. A failover session uses about a core for its first
// seconds and about a hundredth of one a minute later; measured over their
// lives, the first two or four clusters of a class passed for clusters
// that cost half a core each, and the next starts waited 5 s for the cost
// to be measured again (BenchmarkSixtySessions' log, twice a wave).
const DefaultSettling = 30 * time.Second

// cpuWindow is how far back idle CPU is averaged: a start's burst of a
// second or two shows, but does not decide alone.
const cpuWindow = 10 * time.Second

type cpuSample struct {
	at          time.Time
	total, idle float64 // seconds, summed over cores
}

type procSample struct {
	at    time.Time
	start uint64  // the process's start time, so a reused PID is not mistaken for it
	cpu   float64 // seconds
}

// NewMeter returns a Meter of o.
func NewMeter(o MeterOptions) (*Meter, error) {
	if o.Proc == "" {
		o.Proc = procfs.DefaultMountPoint
	}
	if o.Assumed == (Cost{}) {
		o.Assumed = DefaultAssumed
	}
	if o.CostEvery <= 0 {
		o.CostEvery = DefaultCostEvery
	}
	if o.Settling <= 0 {
		o.Settling = DefaultSettling
	}
	fs, err := procfs.NewFS(o.Proc)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", o.Proc, err)
	}
	dir := strings.TrimSuffix(o.ClusterDir, "/") + "/"
	return &Meter{fs: fs, clusterDir: dir, assumed: o.Assumed, costEvery: o.CostEvery, settling: o.Settling, procs: map[int]procSample{}}, nil
}

// Headroom reads MemAvailable and the idle CPU over the last cpuWindow;
// the first call waits a quarter of a second for a second sample.
func (m *Meter) Headroom(ctx context.Context) (Headroom, error) {
	mi, err := m.fs.Meminfo()
	if err != nil {
		return Headroom{}, fmt.Errorf("read meminfo: %w", err)
	}
	if mi.MemAvailableBytes == nil {
		return Headroom{}, fmt.Errorf("read meminfo: no MemAvailable (kernel older than 3.14)")
	}
	idle, cores, err := m.idle(ctx)
	if err != nil {
		return Headroom{}, err
	}
	h := Headroom{MemAvailable: *mi.MemAvailableBytes, IdleCores: idle, Cores: cores}
	if mi.MemTotalBytes != nil {
		h.MemTotal = *mi.MemTotalBytes
	}
	return h, nil
}

func (m *Meter) idle(ctx context.Context) (float64, int, error) {
	m.mu.Lock()
	first := len(m.cpu) == 0
	m.mu.Unlock()
	if first {
		if _, _, err := m.sampleCPU(); err != nil {
			return 0, 0, err
		}
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return m.sampleCPU()
}

// sampleCPU adds a sample of /proc/stat and returns the idle cores over
// the window.
func (m *Meter) sampleCPU() (float64, int, error) {
	st, err := m.fs.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("read stat: %w", err)
	}
	c := st.CPUTotal
	s := cpuSample{at: time.Now(), idle: c.Idle + c.Iowait,
		total: c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal}
	cores := len(st.CPU)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cpu = append(m.cpu, s)
	for len(m.cpu) > 2 && s.at.Sub(m.cpu[1].at) >= cpuWindow {
		m.cpu = m.cpu[1:]
	}
	old := m.cpu[0]
	if s.total <= old.total {
		return float64(cores), cores, nil // no time passed: nothing seen busy
	}
	return (s.idle - old.idle) / (s.total - old.total) * float64(cores), cores, nil
}
