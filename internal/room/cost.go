package room

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// Cost returns the typical cost of the live clusters under the Meter's
// ClusterDir: each cluster's is the sum of its processes' proportional
// memory and CPU, and the typical one is the median of each over the
// clusters past their settling (MeterOptions.Settling), so that a cluster
// in the middle of its start (a core for a few seconds) does not pass for
// what every cluster costs, even when it is one of the few. With none
// settled it is the assumed cost (Clusters 0).
func (m *Meter) Cost(ctx context.Context) (Cost, error) {
	m.mu.Lock()
	if !m.costAt.IsZero() && time.Since(m.costAt) < m.costEvery {
		c := m.cost
		m.mu.Unlock()
		return c, nil
	}
	m.mu.Unlock()
	per, since, err := m.clusters(ctx)
	if err != nil {
		return Cost{}, err
	}
	c := m.assumed
	c.Clusters = 0
	var mems []uint64
	var cpus []float64
	for dir, x := range per {
		if time.Since(since[dir]) < m.settling {
			continue
		}
		mems = append(mems, x.Memory)
		cpus = append(cpus, x.CPU)
	}
	if len(mems) > 0 {
		c = Cost{Memory: median(mems), CPU: median(cpus), Clusters: len(mems)}
	}
	m.mu.Lock()
	m.cost, m.costAt = c, time.Now()
	m.mu.Unlock()
	return c, nil
}

// Clusters measures each live cluster under ClusterDir, by its state
// directory. A process's CPU is its CPU time since the previous call over
// the time between; a process seen for the first time is averaged over its
// life instead.
func (m *Meter) Clusters(ctx context.Context) (map[string]Cost, error) {
	out, _, err := m.clusters(ctx)
	return out, err
}

// clusters is Clusters, with when each cluster's first process started.
func (m *Meter) clusters(ctx context.Context) (map[string]Cost, map[string]time.Time, error) {
	procs, err := m.fs.AllProcs()
	if err != nil {
		return nil, nil, fmt.Errorf("list processes: %w", err)
	}
	now := time.Now()
	boot, err := m.boot()
	if err != nil {
		return nil, nil, err
	}
	out := map[string]Cost{}
	since := map[string]time.Time{}
	seen := make(map[int]procSample, len(m.procs))
	for _, p := range procs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		dir, ok := m.marker(p)
		if !ok {
			continue
		}
		st, err := p.Stat()
		if err != nil {
			continue // it ended meanwhile
		}
		mem := uint64(st.ResidentMemory())
		if r, err := p.ProcSMapsRollup(); err == nil && r.Pss > 0 {
			mem = r.Pss
		}
		cur := procSample{at: now, start: st.Starttime, cpu: st.CPUTime()}
		seen[p.PID] = cur
		c := out[dir]
		c.Memory += mem
		c.CPU += m.cpuRate(p.PID, cur, boot)
		out[dir] = c
		if started := startedAt(boot, cur.start); since[dir].IsZero() || started.Before(since[dir]) {
			since[dir] = started
		}
	}
	m.mu.Lock()
	m.procs = seen
	m.mu.Unlock()
	return out, since, nil
}

// startedAt is when a process started, from its start time in
// /proc/PID/stat (ticks since boot).
func startedAt(boot time.Time, ticks uint64) time.Time {
	return boot.Add(time.Duration(ticks) * time.Second / userHZ)
}

// cpuRate is the cores process pid used since it was last sampled, or
// over its life when it was not.
func (m *Meter) cpuRate(pid int, cur procSample, boot time.Time) float64 {
	m.mu.Lock()
	prev, ok := m.procs[pid]
	m.mu.Unlock()
	if ok && prev.start == cur.start {
		if d := cur.at.Sub(prev.at).Seconds(); d > 0 {
			return (cur.cpu - prev.cpu) / d
		}
	}
	started := startedAt(boot, cur.start)
	if d := cur.at.Sub(started).Seconds(); d > 0 {
		return cur.cpu / d
	}
	return 0
}

// userHZ is the unit of a process's start time in /proc/PID/stat: 100 on
// every Linux architecture oplab runs on (procfs assumes the same).
const userHZ = 100

func (m *Meter) boot() (time.Time, error) {
	st, err := m.fs.Stat()
	if err != nil {
		return time.Time{}, fmt.Errorf("read stat: %w", err)
	}
	return time.Unix(int64(st.BootTime), 0), nil
}

// marker returns the cluster directory p belongs to, if it is one of ours.
// Another user's processes cannot be read, and are not ours.
func (m *Meter) marker(p procfs.Proc) (string, bool) {
	env, err := p.Environ()
	if err != nil {
		return "", false
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, MarkerVar+"="); ok && strings.HasPrefix(v, m.clusterDir) {
			return v, true
		}
	}
	return "", false
}

// median is the middle value of xs (the upper one of an even count: the
// estimate errs on the side of cost).
func median[T cmp.Ordered](xs []T) T {
	slices.Sort(xs)
	return xs[len(xs)/2]
}
