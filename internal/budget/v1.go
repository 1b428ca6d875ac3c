package budget

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// On cgroup v1 each controller is a hierarchy of its own. A cell's group is
// made in those it needs: memory, cpu and pids; cpuacct (its CPU time) and
// freezer (to stop it) where they are mounted.
var (
	requiredV1 = []cgroup1.Name{cgroup1.Memory, cgroup1.Cpu, cgroup1.Pids}
	optionalV1 = []cgroup1.Name{cgroup1.Cpuacct, cgroup1.Freezer}
)

// pather is the part of a v1 subsystem that says where its groups are.
type pather interface {
	Path(path string) string
}

// hierarchyV1 returns the mounted subsystems a cell uses. The memory
// controller accounts swap only where the kernel does.
func hierarchyV1() ([]cgroup1.Subsystem, error) {
	all, err := cgroup1.Default()
	if err != nil {
		return nil, err
	}
	var out []cgroup1.Subsystem
	for _, s := range all {
		switch {
		case s.Name() == cgroup1.Memory:
			root := filepath.Dir(s.(pather).Path("/"))
			out = append(out, cgroup1.NewMemory(root, cgroup1.OptionalSwap()))
		case slices.Contains(requiredV1, s.Name()) || slices.Contains(optionalV1, s.Name()):
			out = append(out, s)
		}
	}
	for _, name := range requiredV1 {
		if !slices.ContainsFunc(out, func(s cgroup1.Subsystem) bool { return s.Name() == name }) {
			return nil, fmt.Errorf("the cgroup v1 %s controller is not mounted", name)
		}
	}
	return out, nil
}

type v1Tree struct {
	subsystems []cgroup1.Subsystem
	parent     cgroup1.Path
}

func openV1() (tree, error) {
	subs, err := hierarchyV1()
	if err != nil {
		return nil, err
	}
	t := &v1Tree{subsystems: subs, parent: cgroup1.NestedPath(parentName)}
	shares := uint64(parentSharesV1)
	_, err = cgroup1.New(t.parent, &specs.LinuxResources{CPU: &specs.LinuxCPU{Shares: &shares}}, t.hierarchy())
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("%w: run oplab as root, or in a cgroup delegated to its user (systemd's Delegate=yes)", err)
		}
		return nil, err
	}
	return t, nil
}

func (t *v1Tree) hierarchy() cgroup1.InitOpts {
	return cgroup1.WithHierarchy(func() ([]cgroup1.Subsystem, error) { return t.subsystems, nil })
}

func (t *v1Tree) make(name string, b Budget) (Record, error) {
	rec := Record{Version: 1, Paths: map[string]string{}}
	for _, s := range t.subsystems {
		p, err := t.parent(s.Name())
		if errors.Is(err, cgroup1.ErrControllerNotActive) {
			continue
		}
		if err != nil {
			return Record{}, err
		}
		rec.Paths[string(s.Name())] = filepath.Join(p, name)
	}
	g := v1Group{paths: rec.Paths, subsystems: t.subsystems}
	// A group of that name left by a cell that ended without its owner
	// (a killed oplab) goes first: its ceiling may be an older one's.
	if err := g.remove(); err != nil && !errors.Is(err, os.ErrNotExist) {
		g.kill()
		time.Sleep(100 * time.Millisecond)
		if err := g.remove(); err != nil && !errors.Is(err, os.ErrNotExist) {
			return Record{}, fmt.Errorf("a group of that name is still in use: %w", err)
		}
	}
	shares, tasks := uint64(cellSharesV1), b.Tasks
	res := &specs.LinuxResources{
		CPU:    &specs.LinuxCPU{Shares: &shares},
		Memory: memoryV1(b.Memory),
		Pids:   &specs.LinuxPids{Limit: &tasks},
	}
	cg, err := cgroup1.New(g.path, res, t.hierarchy())
	if err != nil {
		return Record{}, err
	}
	if _, err := cg.New(LeafCluster, &specs.LinuxResources{}); err != nil {
		return Record{}, err
	}
	if _, err := cg.New(LeafConsole, &specs.LinuxResources{Memory: memoryV1(b.Console)}); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// memoryV1 is a memory ceiling of limit bytes, with swap (memsw, memory
// and swap together) held to the same where the kernel accounts it.
func memoryV1(limit int64) *specs.LinuxMemory {
	m := &specs.LinuxMemory{Limit: &limit}
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"); err == nil {
		m.Swap = &limit
	}
	return m
}

type v1Group struct {
	paths      map[string]string
	subsystems []cgroup1.Subsystem // nil: read from the mounts
}

func (g v1Group) path(name cgroup1.Name) (string, error) {
	p, ok := g.paths[string(name)]
	if !ok {
		return "", cgroup1.ErrControllerNotActive
	}
	return p, nil
}

func (g v1Group) load() (cgroup1.Cgroup, error) {
	return cgroup1.Load(g.path, cgroup1.WithHierarchy(g.hierarchy))
}

func (g v1Group) hierarchy() ([]cgroup1.Subsystem, error) {
	if g.subsystems != nil {
		return g.subsystems, nil
	}
	return hierarchyV1()
}

// dirs returns the group's directory in each hierarchy, with leaf under it
// when leaf is not empty.
func (g v1Group) dirs(leaf string) []string {
	subs, err := g.hierarchy()
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range subs {
		if p, ok := g.paths[string(s.Name())]; ok {
			out = append(out, filepath.Join(s.(pather).Path(p), leaf))
		}
	}
	return out
}

// dirsOf returns the group's directory in the hierarchy of name.
func (g v1Group) dirsOf(name cgroup1.Name) []string {
	subs, err := g.hierarchy()
	if err != nil {
		return nil
	}
	for _, s := range subs {
		if p, ok := g.paths[string(name)]; ok && s.Name() == name {
			return []string{s.(pather).Path(p)}
		}
	}
	return nil
}

func (g v1Group) procs(leaf string) []string {
	var out []string
	for _, d := range g.dirs(leaf) {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return out
}

func (g v1Group) usage() (Usage, error) {
	cg, err := g.load()
	if err != nil {
		return Usage{}, err
	}
	m, err := cg.Stat(cgroup1.IgnoreNotExist)
	if err != nil {
		return Usage{}, err
	}
	var u Usage
	if mem := m.Memory; mem != nil {
		if mem.Usage != nil {
			u.Memory, u.MemoryLimit, u.MemoryPeak = mem.Usage.Usage, mem.Usage.Limit, mem.Usage.Max
		}
		u.Resident = mem.TotalRSS
	}
	// The kernel counts a kill in the group of the process it killed:
	// a leaf.
	for _, dir := range g.dirsOf(cgroup1.Memory) {
		u.OOMKills = readKey(filepath.Join(dir, LeafCluster, "memory.oom_control"), "oom_kill")
		u.ConsoleOOMKills = readKey(filepath.Join(dir, LeafConsole, "memory.oom_control"), "oom_kill")
	}
	if p := m.Pids; p != nil {
		u.Tasks, u.TasksLimit = p.Current, p.Limit
	}
	if c := m.CPU; c != nil && c.Usage != nil {
		u.CPU = time.Duration(c.Usage.Total)
	}
	for _, dir := range g.dirsOf(cgroup1.Cpu) {
		quota, errQ := readInt(filepath.Join(dir, "cpu.cfs_quota_us"))
		period, errP := readInt(filepath.Join(dir, "cpu.cfs_period_us"))
		if errQ == nil && errP == nil && quota > 0 && period > 0 {
			u.CPULimit = quota * 1000 / period
		}
	}
	return u, nil
}

func (g v1Group) setCPU(millicores int64) error {
	cg, err := g.load()
	if err != nil {
		return err
	}
	period, quota := uint64(cpuPeriod), int64(-1)
	if millicores > 0 {
		quota = millicores * cpuPeriod / 1000
	}
	return cg.Update(&specs.LinuxResources{CPU: &specs.LinuxCPU{Period: &period, Quota: &quota}})
}

func (g v1Group) freeze(frozen bool) error {
	cg, err := g.load()
	if errors.Is(err, cgroup1.ErrCgroupDeleted) {
		// The group is gone (its cell stopped, or the machine restarted):
		// said as v2 says it.
		return fmt.Errorf("%w: %w", os.ErrNotExist, err)
	}
	if err != nil {
		return err
	}
	if frozen {
		return cg.Freeze()
	}
	return cg.Thaw()
}

// remove removes the group's leaves and then the group, in every
// hierarchy; it fails while a process is in it.
func (g v1Group) remove() error {
	var errs []error
	gone := 0
	dirs := g.dirs("")
	for _, d := range dirs {
		for _, leaf := range []string{LeafCluster, LeafConsole, ""} {
			err := os.Remove(filepath.Join(d, leaf))
			switch {
			case err == nil:
			case errors.Is(err, os.ErrNotExist):
				if leaf == "" {
					gone++
				}
			default:
				errs = append(errs, err)
			}
		}
	}
	if len(errs) == 0 && gone == len(dirs) {
		return os.ErrNotExist
	}
	return errors.Join(errs...)
}

func (g v1Group) kill() { (&Group{impl: g}).kill() }
