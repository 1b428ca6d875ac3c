package loadgen

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// MachineStats summarise the machine's CPU and memory over a run.
type MachineStats struct {
	Samples int
	// CPUMean and CPUPeak are the busy share of all cores, 0..1, averaged
	// over the run and at the busiest sample.
	CPUMean, CPUPeak float64
	// MemUsedStart and MemUsedPeak are MemTotal − MemAvailable, in bytes.
	MemUsedStart, MemUsedPeak uint64
}

// Sampler samples /proc/stat and /proc/meminfo until stopped.
type Sampler struct {
	stop chan struct{}
	done chan MachineStats
}

// StartSampler samples every interval.
func StartSampler(every time.Duration) *Sampler {
	s := &Sampler{stop: make(chan struct{}), done: make(chan MachineStats, 1)}
	go func() {
		var st MachineStats
		var busySum float64
		prev, perr := readCPU()
		st.MemUsedStart, _ = memUsed()
		st.MemUsedPeak = st.MemUsedStart
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				if st.Samples > 0 {
					st.CPUMean = busySum / float64(st.Samples)
				}
				s.done <- st
				return
			case <-t.C:
			}
			cur, err := readCPU()
			if err == nil && perr == nil && cur.total > prev.total {
				busy := float64(cur.busy-prev.busy) / float64(cur.total-prev.total)
				busySum += busy
				st.CPUPeak = max(st.CPUPeak, busy)
				st.Samples++
			}
			prev, perr = cur, err
			if m, err := memUsed(); err == nil {
				st.MemUsedPeak = max(st.MemUsedPeak, m)
			}
		}
	}()
	return s
}

// Stop ends sampling and returns the summary.
func (s *Sampler) Stop() MachineStats {
	close(s.stop)
	return <-s.done
}

type cpuTimes struct{ busy, total uint64 }

// readCPU reads the first line of /proc/stat: jiffies busy and in all
// (idle and iowait are not busy).
func readCPU() (cpuTimes, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return cpuTimes{}, err
	}
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return cpuTimes{}, fmt.Errorf("/proc/stat: unexpected first line %q", line)
	}
	var t cpuTimes
	for i, f := range fields[1:] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("/proc/stat: %w", err)
		}
		t.total += v
		if i != 3 && i != 4 { // idle, iowait
			t.busy += v
		}
	}
	return t, nil
}

// memUsed is MemTotal − MemAvailable from /proc/meminfo, in bytes.
func memUsed() (uint64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	var total, avail uint64
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseUint(f[1], 10, 64)
		switch f[0] {
		case "MemTotal:":
			total = v * 1024
		case "MemAvailable:":
			avail = v * 1024
		}
	}
	if total == 0 || avail == 0 || avail > total {
		return 0, fmt.Errorf("/proc/meminfo: no MemTotal/MemAvailable")
	}
	return total - avail, nil
}
