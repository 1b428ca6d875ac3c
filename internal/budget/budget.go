package budget

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3"
)

// Budget is the most one learner's cell may take of the machine.
type Budget struct {
	// Memory bounds the cell's memory, page cache (and, where the kernel
	// accounts it, swap) included. Above it the kernel reclaims what it
	// can and then kills a process of the cell, never one outside it.
	Memory int64
	// Tasks bounds the cell's processes and threads together.
	Tasks int64
	// Etcd is etcd's quota (--quota-backend-bytes): above it etcd
	// refuses writes with "database space exceeded".
	Etcd int64
	// Disk bounds the cell's directory on the host: etcd's data and
	// write-ahead log, the components' logs, the cell's /tmp. It is
	// measured, and each writer in the cell is bounded below it.
	Disk int64
	// Console is the ceiling of the cell's console leaf, inside Memory:
	// every web console command of the learner at once.
	Console int64
	// CPU caps the cell's CPU time, in thousandths of a core (a cgroup's
	// CPU quota); none when negative. The weight every cell has alike
	// shares the CPU fairly among cells that want it all the time, but a
	// learner's cluster at work is a chain of short bursts (a check asks
	// the API server, which asks etcd) and waits behind a busy neighbour's
	// threads at every step: measured with one learner filling their
	// cluster, the other nine's Check p95 went from 0.7 s to 8-14 s under
	// weights alone (BenchmarkWorstLearner). The cap keeps a busy cell
	// from holding more than its part of the machine at all. The cap is
	// set once the cell's cluster is ready, or, for a session's cluster,
	// once its lab is set up (Group.SetCPU).
	CPU int64
}

// Defaults. A failover cell's group holds about 320 MiB once its cluster
// is idle (270 MiB of it resident: etcd, kube-controlplane with KWOK, the
// operator) and peaked at 380 MiB through every embedded lab's self-test;
// it has about 200 threads, most of them the Go runtimes'. 768 MiB leaves
// the console's 256 MiB on top of that peak, and lets admission, which
// counts every cell at its ceiling, promise 30 cells on a 24 GiB machine
// with its 512 MiB margin (at 1 GiB it was 23: a class of 30 never got its
// clusters).
const (
	DefaultMemory = 768 << 20
	DefaultTasks  = 1024
	DefaultEtcd   = 256 << 20
	DefaultDisk   = 1 << 30
	DefaultCPU    = 500 // half a core
	// ConsoleMemory is the ceiling of a cell's console group: every
	// kubectl the learner's web console runs at once, together.
	ConsoleMemory = 256 << 20
)

// WALBytes is the most etcd's write-ahead log takes on disk: etcd keeps
// two 64 MiB segments (--max-wals=2) and writes into a third.
const WALBytes = 3 * 64 << 20

// Default is the budget of a cell when the operator sets none.
var Default = Budget{Memory: DefaultMemory, Tasks: DefaultTasks, Etcd: DefaultEtcd, Disk: DefaultDisk, Console: ConsoleMemory, CPU: DefaultCPU}

// Kind is the budget of a kind node container when the operator sets
// none: a node runs a whole machine's worth of Kubernetes (systemd,
// containerd, the kubelet, the control plane as pods) and real
// PostgreSQL; measured at 744–902 MiB with the operator and three
// PostgreSQL pods (docs/figures.md), so twice that leaves its page cache
// room. It may use a core: its control plane and PostgreSQL are real
// containers, several times an embedded cell's work. Etcd and Disk do not
// apply: the node's etcd and disk are kind's.
var Kind = Budget{Memory: 2 << 30, Tasks: KindTasks, Etcd: DefaultEtcd, Disk: DefaultDisk, Console: ConsoleMemory, CPU: 1000}

// KindTasks is a kind node's task bound: systemd, containerd, the kubelet
// and the control plane's pods run many more threads than a cell.
const KindTasks = 4096

// WithDefaults fills the fields of b left zero from Default.
func (b Budget) WithDefaults() Budget { return b.Or(Default) }

// Or fills the fields of b left zero from def.
func (b Budget) Or(def Budget) Budget {
	if b.Memory == 0 {
		b.Memory = def.Memory
	}
	if b.Tasks == 0 {
		b.Tasks = def.Tasks
	}
	if b.Etcd == 0 {
		b.Etcd = def.Etcd
	}
	if b.Disk == 0 {
		b.Disk = def.Disk
	}
	if b.Console == 0 {
		b.Console = def.Console
	}
	if b.CPU == 0 {
		b.CPU = def.CPU
	}
	return b
}

// Validate refuses a budget no cluster can run in.
func (b Budget) Validate() error {
	if b.Memory < 256<<20 {
		return fmt.Errorf("a cell's memory budget of %s is too small: a cluster needs at least 256 MiB (about 600 MiB idle)", Bytes(b.Memory))
	}
	if b.Tasks < 128 {
		return fmt.Errorf("a cell's task bound of %d is too small: a cluster runs about 200 threads", b.Tasks)
	}
	if b.Console < 32<<20 || b.Console > b.Memory {
		return fmt.Errorf("a console ceiling of %s is out of range: between 32 MiB and the cell's %s", Bytes(b.Console), Bytes(b.Memory))
	}
	if b.CPU > 0 && b.CPU < 100 {
		return fmt.Errorf("a cell's CPU cap of %dm is too small: a cluster needs a tenth of a core to answer at all", b.CPU)
	}
	if b.Etcd < 64<<20 {
		return fmt.Errorf("an etcd quota of %s is too small: a new cluster's etcd holds about 20 MiB", Bytes(b.Etcd))
	}
	if b.Disk < b.Etcd+WALBytes+256<<20 {
		return fmt.Errorf("a cell's disk bound of %s is too small for an etcd quota of %s: it needs the quota, etcd's log (%s) and 256 MiB more", Bytes(b.Disk), Bytes(b.Etcd), Bytes(WALBytes))
	}
	return nil
}

// CPU weights. Every cell has the same weight beside every other, so a
// busy cluster slows only itself. On cgroup v1 the cells' parent weighs
// as much as one of the server's threads, and the server's threads share
// the root group with the rest of the machine, each at that weight: with
// two of its threads busy (a Check and a page) the server has two thirds
// of the CPU, and all the cells together the rest. On v2 the server's own
// leaf weighs twice the cells' parent. A smaller parent would starve
// every cluster behind any busy process on the machine (a build, a
// browser), not only behind the server.
const (
	cellSharesV1   = 1024 // cpu.shares: a cell beside another cell
	parentSharesV1 = 1024 // cpu.shares of oplab-cells beside each of the server's threads
	cellWeightV2   = 100  // cpu.weight, the default
	parentWeightV2 = 50   // beside the server's leaf, at the default 100
)

// cpuPeriod is the period of a CPU cap, in microseconds: the kernel's
// default.
const cpuPeriod = 100000

// Leaves of a cell's group, where processes go (cgroup v2 lets processes
// live only in leaves of a group whose controllers its children share).
const (
	LeafCluster = "cluster"
	LeafConsole = "console"
)

// parentName is the group, under the maker's own, that holds the cells.
const parentName = "oplab-cells"

// Tree is where one process makes cells' groups: oplab-cells under its
// own group.
type Tree struct {
	impl tree
}

// tree is one cgroup version's way of making groups.
type tree interface {
	make(name string, b Budget) (Record, error)
}

// Open prepares the cells' parent group under the calling process's own,
// or says in one line why no group can be made here.
func Open() (*Tree, error) {
	var (
		t   tree
		err error
	)
	switch cgroups.Mode() {
	case cgroups.Legacy, cgroups.Hybrid:
		t, err = openV1()
	case cgroups.Unified:
		t, err = openV2()
	default:
		err = errors.New("no cgroup file system is mounted at /sys/fs/cgroup")
	}
	if err != nil {
		return nil, fmt.Errorf("no control group can be made for a cell: %w", err)
	}
	return &Tree{impl: t}, nil
}

// validName is what a cell's group may be called: one path element.
var validName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,120}$`)

// Make makes the group of the cell name with budget b, and its two
// leaves; a group left by an earlier cell of that name is made anew.
func (t *Tree) Make(name string, b Budget) (*Group, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("budget: %q is not a group name", name)
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	rec, err := t.impl.make(name, b)
	if err != nil {
		return nil, fmt.Errorf("make the cell's control group: %w", err)
	}
	return Load(rec), nil
}

// Record is what names a cell's group across processes: kept with the
// cluster's state, so that a later oplab puts the cluster's next process
// in the same group and reads its usage.
type Record struct {
	// Version is the cgroup version, 1 or 2.
	Version int `json:"version"`
	// Paths are the group's paths, each relative to its hierarchy's
	// mount: one per controller on v1, "" on v2.
	Paths map[string]string `json:"paths"`
}

// Group is one cell's control group.
type Group struct {
	rec  Record
	impl group
}

type group interface {
	setCPU(millicores int64) error
	procs(leaf string) []string
	usage() (Usage, error)
	freeze(bool) error
	remove() error
}

// Load returns the group rec names; it does not check it still exists.
func Load(rec Record) *Group {
	g := &Group{rec: rec}
	if rec.Version == 2 {
		g.impl = v2Group{path: rec.Paths[""]}
	} else {
		g.impl = v1Group{paths: rec.Paths}
	}
	return g
}

// Record returns what names g.
func (g *Group) Record() Record { return g.rec }

// Procs returns the cgroup.procs files a process writes itself to ("0")
// to join leaf (LeafCluster or LeafConsole) of g.
func (g *Group) Procs(leaf string) []string { return g.impl.procs(leaf) }

// Usage reads what g's processes use now and what they have hit.
func (g *Group) Usage() (Usage, error) { return g.impl.usage() }

// SetCPU caps g's CPU time at millicores thousandths of a core, or lifts
// the cap when it is negative. A cell is made without its cap (Budget.CPU)
// and capped once its cluster is ready, or a session's once its lab is set
// up: a start is a few CPU-seconds at once, which admission bounds (a
// start a core), and at the cap it would take four times as long.
func (g *Group) SetCPU(millicores int64) error { return g.impl.setCPU(millicores) }

// Freeze stops every process of g from running until Thaw, keeping their
// memory.
func (g *Group) Freeze() error { return g.impl.freeze(true) }

// Thaw lets g's processes run again. A group that is gone (its cell
// ended, or the machine restarted) is an error that is os.ErrNotExist,
// for Freeze as well.
func (g *Group) Thaw() error { return g.impl.freeze(false) }

// Delete removes g once its processes are gone. A process still in it
// after a few seconds (one that ignored the cell's end) is killed: a
// cell leaves nothing running.
func (g *Group) Delete() error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := g.impl.remove()
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("remove the cell's control group: %w", err)
		}
		if time.Now().After(deadline.Add(-3 * time.Second)) {
			g.kill()
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill sends SIGKILL to every process left in g.
func (g *Group) kill() {
	for _, leaf := range []string{LeafCluster, LeafConsole} {
		for _, f := range g.Procs(leaf) {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, field := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(field); err == nil && pid > 1 {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	}
}

// Usage is what a cell's group uses and has hit.
type Usage struct {
	// Memory is the group's memory now, page cache included; Limit its
	// ceiling.
	Memory, MemoryLimit uint64
	// MemoryPeak is the most it has used.
	MemoryPeak uint64
	// Resident is the part of Memory the kernel cannot give back without
	// killing a process (anonymous memory: there is no swap for a cell).
	// Near the ceiling the rest, the page cache of the cluster's programs
	// and files, is dropped and read again at every turn, and the cluster
	// crawls before the kernel kills anything.
	Resident uint64
	// OOMKills counts the cluster's processes the kernel killed because
	// the cell reached its ceiling; ConsoleOOMKills the console's, at the
	// console's ceiling or the cell's.
	OOMKills, ConsoleOOMKills uint64
	// Tasks and TasksLimit are its processes and threads.
	Tasks, TasksLimit uint64
	// CPU is the CPU time its processes have used.
	CPU time.Duration
	// CPULimit is its cap in thousandths of a core; 0 when it has none
	// (SetCPU).
	CPULimit int64
}

// readKey reads the value of key from a file of "key value" lines, 0
// when it is not there.
func readKey(path, key string) uint64 {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// Bytes formats n bytes as KiB, MiB or GiB.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	default:
		return fmt.Sprintf("%d KiB", n>>10)
	}
}

// readInt reads a file that holds one integer.
func readInt(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
}
