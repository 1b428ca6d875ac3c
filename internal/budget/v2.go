package budget

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/cgroups/v3/cgroup2"
)

// On cgroup v2 there is one hierarchy, and a group whose children share a
// controller may hold no process itself. oplab's own group is such a
// parent once oplab-cells has controllers, so the calling process first
// moves to a leaf of its own group, oplab-server: beside oplab-cells, with
// the default weight, twice the cells' parent.

const (
	mountV2    = "/sys/fs/cgroup"
	serverLeaf = "oplab-server"
)

var controllersV2 = []string{"cpu", "memory", "pids"}

type v2Tree struct {
	parent *cgroup2.Manager
	path   string // the parent's group path
}

func openV2() (tree, error) {
	own, err := cgroup2.NestedGroupPath("")
	if err != nil {
		return nil, err
	}
	ownDir := filepath.Join(mountV2, own)
	avail, err := os.ReadFile(filepath.Join(ownDir, "cgroup.controllers"))
	if err != nil {
		return nil, err
	}
	for _, c := range controllersV2 {
		if !containsWord(string(avail), c) {
			return nil, fmt.Errorf("the cgroup v2 %s controller is not available in %s (not delegated to this user?)", c, own)
		}
	}
	if err := enableV2(ownDir); err != nil {
		// Processes in our own group keep its controllers from its
		// children: move this process to a leaf and try again.
		leaf := filepath.Join(ownDir, serverLeaf)
		if err := os.MkdirAll(leaf, 0o755); err != nil {
			return nil, permissionHint(err)
		}
		if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
			return nil, permissionHint(err)
		}
		if err := enableV2(ownDir); err != nil {
			return nil, permissionHint(fmt.Errorf("enable %v for the cells in %s (other processes share oplab's group?): %w", controllersV2, own, err))
		}
	}
	weight := uint64(parentWeightV2)
	path := filepath.Join(own, parentName)
	m, err := cgroup2.NewManager(mountV2, path, &cgroup2.Resources{CPU: &cgroup2.CPU{Weight: &weight}})
	if err != nil {
		return nil, permissionHint(err)
	}
	return &v2Tree{parent: m, path: path}, nil
}

func enableV2(dir string) error {
	var s string
	for _, c := range controllersV2 {
		s += "+" + c + " "
	}
	return os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(s), 0)
}

func permissionHint(err error) error {
	if errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("%w: run oplab as root, or in a cgroup delegated to its user (systemd's Delegate=yes)", err)
	}
	return err
}

func (t *v2Tree) make(name string, b Budget) (Record, error) {
	path := filepath.Join(t.path, name)
	g := v2Group{path: path}
	if err := g.remove(); err != nil && !errors.Is(err, os.ErrNotExist) {
		(&Group{impl: g}).kill()
		time.Sleep(100 * time.Millisecond)
		if err := g.remove(); err != nil && !errors.Is(err, os.ErrNotExist) {
			return Record{}, fmt.Errorf("a group of that name is still in use: %w", err)
		}
	}
	weight := uint64(cellWeightV2)
	mem, tasks := b.Memory, b.Tasks
	res := &cgroup2.Resources{
		CPU:    &cgroup2.CPU{Weight: &weight},
		Memory: memoryV2(mountV2, path, mem),
		Pids:   &cgroup2.Pids{Max: tasks},
	}
	cell, err := cgroup2.NewManager(mountV2, path, res)
	if err != nil {
		return Record{}, permissionHint(err)
	}
	if _, err := cell.NewChild(LeafCluster, nil); err != nil {
		return Record{}, err
	}
	if _, err := cell.NewChild(LeafConsole, &cgroup2.Resources{Memory: memoryV2(mountV2, path, b.Console)}); err != nil {
		return Record{}, err
	}
	return Record{Version: 2, Paths: map[string]string{"": path}}, nil
}

// memoryV2 is a memory ceiling of limit bytes and no swap, where the
// kernel accounts swap.
func memoryV2(mount, parent string, limit int64) *cgroup2.Memory {
	m := &cgroup2.Memory{Max: &limit}
	if _, err := os.Stat(filepath.Join(mount, filepath.Dir(parent), "memory.swap.max")); err == nil {
		none := int64(0)
		m.Swap = &none
	}
	return m
}

type v2Group struct{ path string }

func (g v2Group) dir(leaf string) string { return filepath.Join(mountV2, g.path, leaf) }

func (g v2Group) procs(leaf string) []string {
	return []string{filepath.Join(g.dir(leaf), "cgroup.procs")}
}

func (g v2Group) usage() (Usage, error) {
	m, err := cgroup2.Load(g.path)
	if err != nil {
		return Usage{}, err
	}
	st, err := m.Stat()
	if err != nil {
		return Usage{}, err
	}
	var u Usage
	if mem := st.Memory; mem != nil {
		u.Memory, u.MemoryLimit, u.MemoryPeak = mem.Usage, mem.UsageLimit, mem.MaxUsage
		u.Resident = mem.Anon
	}
	// A leaf's memory.events counts the kills of its own processes.
	u.OOMKills = readKey(filepath.Join(g.dir(LeafCluster), "memory.events"), "oom_kill")
	u.ConsoleOOMKills = readKey(filepath.Join(g.dir(LeafConsole), "memory.events"), "oom_kill")
	if p := st.Pids; p != nil {
		u.Tasks, u.TasksLimit = p.Current, p.Limit
	}
	if c := st.CPU; c != nil {
		u.CPU = time.Duration(c.UsageUsec) * time.Microsecond
	}
	// cpu.max is "QUOTA PERIOD", or "max PERIOD" without a cap.
	if data, err := os.ReadFile(filepath.Join(mountV2, g.path, "cpu.max")); err == nil {
		if f := strings.Fields(string(data)); len(f) == 2 {
			quota, errQ := strconv.ParseInt(f[0], 10, 64)
			period, errP := strconv.ParseInt(f[1], 10, 64)
			if errQ == nil && errP == nil && quota > 0 && period > 0 {
				u.CPULimit = quota * 1000 / period
			}
		}
	}
	return u, nil
}

func (g v2Group) setCPU(millicores int64) error {
	m, err := cgroup2.Load(g.path)
	if err != nil {
		return err
	}
	period := uint64(cpuPeriod)
	var quota *int64 // "max": no cap
	if millicores > 0 {
		q := millicores * cpuPeriod / 1000
		quota = &q
	}
	return m.Update(&cgroup2.Resources{CPU: &cgroup2.CPU{Max: cgroup2.NewCPUMax(quota, &period)}})
}

func (g v2Group) freeze(frozen bool) error {
	m, err := cgroup2.Load(g.path)
	if err != nil {
		return err
	}
	if frozen {
		return m.Freeze()
	}
	return m.Thaw()
}

func (g v2Group) remove() error {
	var errs []error
	for _, leaf := range []string{LeafCluster, LeafConsole, ""} {
		if err := os.Remove(g.dir(leaf)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		if _, err := os.Stat(g.dir("")); errors.Is(err, os.ErrNotExist) {
			return nil
		}
	}
	return errors.Join(errs...)
}

func containsWord(s, w string) bool { return slices.Contains(strings.Fields(s), w) }
