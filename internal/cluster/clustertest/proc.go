package clustertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times on Linux.
const clockTicks = 100

// CPUTime returns the CPU time a process has used so far: utime plus stime
// of /proc/<pid>/stat. Benchmarks read it twice and divide the difference by
// the time between, which measures the process's own CPU use whatever else
// the machine is doing.
func CPUTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command, want at least 13", pid, len(f))
	}
	// Fields after the command: state(0) ... utime(11) stime(12).
	u, err := strconv.ParseInt(f[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat utime: %w", pid, err)
	}
	st, err := strconv.ParseInt(f[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat stime: %w", pid, err)
	}
	return time.Duration(u+st) * time.Second / clockTicks, nil
}

// Children returns the PIDs of a process's children, from every thread's
// /proc/<pid>/task/<tid>/children.
func Children(pid int) ([]int, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, t := range tasks {
		data, err := os.ReadFile(dir + "/" + t.Name() + "/children")
		if err != nil {
			continue // the thread ended
		}
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

// ProcessName returns the base name of the program a process runs, from its
// /proc/<pid>/cmdline (/proc/<pid>/comm cuts names at 15 characters).
func ProcessName(pid int) (string, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return "", err
	}
	argv0, _, _ := strings.Cut(string(data), "\x00")
	if argv0 == "" {
		return "", fmt.Errorf("/proc/%d/cmdline is empty: the process has exited", pid)
	}
	return filepath.Base(argv0), nil
}

// PSS is a process's proportional set size from /proc/<pid>/smaps_rollup,
// in bytes: each page it maps counted divided by the number of processes
// mapping it, so summing the PSS of several processes counts a shared
// binary's pages once. Anon is the part in anonymous memory (the heap and
// stacks), File the part in file pages (the programs' own code and data,
// which other clusters' processes of the same programs share).
type PSS struct {
	Total, Anon, File uint64
}

// Plus is p and q added up.
func (p PSS) Plus(q PSS) PSS {
	return PSS{Total: p.Total + q.Total, Anon: p.Anon + q.Anon, File: p.File + q.File}
}

// ReadPSS returns a process's PSS (Linux 5.7 or later for the split).
func ReadPSS(pid int) (PSS, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return PSS{}, err
	}
	var p PSS
	var total bool
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		kb, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return PSS{}, fmt.Errorf("/proc/%d/smaps_rollup %s: %w", pid, f[0], err)
		}
		switch f[0] {
		case "Pss:":
			p.Total, total = kb<<10, true
		case "Pss_Anon:":
			p.Anon = kb << 10
		case "Pss_File:":
			p.File = kb << 10
		}
	}
	if !total {
		return PSS{}, fmt.Errorf("/proc/%d/smaps_rollup: no Pss", pid)
	}
	return p, nil
}
