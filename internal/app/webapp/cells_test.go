package webapp

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/loadgen"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/walltest"
	"oplab.dev/oplab/web"
)

// TestServedClassClustersAreInCells serves a class as `oplab serve
// --addr 0.0.0.0:8080 --warm failover=1` builds the server (the App with
// serve's default budget, CheckServe on an address that is not loopback,
// the server with a warm pool), and two learners join the class and start
// the failover lab over HTTP. Then every cluster the server made — each
// learner's, the warm one taken and the one made to refill the pool — is
// looked for on the machine itself, not in the provider's records: every
// process that carries a cluster's directory in its environment runs in
// that cluster's cell (user, mount, network, PID, IPC and UTS namespaces
// none of which is the server's, the same for all of the cluster's
// programs and another cluster's for none) and in its budget group (one
// group of the cell's own under oplab-cells, whose memory ceiling and task
// bound are serve's defaults); and every process the server started
// belongs to one of those clusters. bubblewrap's and nsenter's own
// processes, which make and enter the cell from outside, are held only to
// the group: they run no program of the cluster.
func TestServedClassClustersAreInCells(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	bin, data := clustertest.BinDir(t), t.TempDir()
	b, err := app.ParseBudget("", 0, "", "") // serve's flags, left at their defaults
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(ctx, app.Config{DataDir: data, BinDir: bin, Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	walltest.Require(t, walltest.Cell, walltest.Contained(a.Contained()))
	serving, err := a.CheckServe("0.0.0.0:8080", false)
	if err != nil || !serving.Classes || !serving.Contained {
		t.Fatalf("CheckServe on 0.0.0.0:8080: got %+v, %v; want classes, contained", serving, err)
	}
	ts := httptest.NewUnstartedServer(nil)
	srv, closeServer, err := NewServer(ctx, a, ServerConfig{BinDir: bin, DataDir: data, Web: web.FS,
		Hosts: server.Hosts(ts.Listener.Addr().String()), Serving: &serving,
		Warm: app.PoolOptions{Sizes: map[string]int{"failover": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	defer func() {
		ts.Close()
		if err := closeServer(); err != nil {
			t.Errorf("close the server: %v", err)
		}
		list, _ := a.SessionList(context.WithoutCancel(ctx), "")
		for _, s := range list {
			stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			if _, err := a.Stop(stop, s.ID, "the test ended", nil); err != nil {
				t.Errorf("stop session %s: %v", s.ID, err)
			}
			cancel()
		}
	}()

	if _, err := a.AddInstructor(ctx, "teacher", "correct horse battery", false); err != nil {
		t.Fatal(err)
	}
	c, err := a.CreateClass(ctx, class.Actor{Name: "teacher"}, class.Spec{Name: "walls", Labs: []string{"failover"}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the warm session", 5*time.Minute, func() (string, bool) {
		ready, _, err := a.Warm(ctx, "", "failover")
		return fmt.Sprintf("%d ready (%v)", ready, err), ready >= 1
	})
	for _, name := range []string{"Ada", "Grace"} {
		l := loadgen.NewLearner(ts.URL)
		if err := l.Join(ctx, c.JoinCode, name); err != nil {
			t.Fatalf("%s joins: %v", name, err)
		}
		s, err := l.Start(ctx, "failover")
		if err != nil {
			t.Fatalf("%s starts the failover lab: %v", name, err)
		}
		t.Logf("%s's session %s: %s", name, s.ID, s.State)
	}
	// The pool refills what a learner took.
	waitFor(t, ctx, "the warm pool refilled", 5*time.Minute, func() (string, bool) {
		ready, _, err := a.Warm(ctx, "", "failover")
		return fmt.Sprintf("%d ready (%v)", ready, err), ready >= 1
	})

	list, err := a.SessionList(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sum := range list {
		s, err := a.Status(ctx, sum.ID)
		if err != nil {
			t.Fatal(err)
		}
		if s.Cluster != "" && s.ClusterLive {
			names = append(names, s.Cluster)
		}
	}
	slices.Sort(names)
	entries, err := os.ReadDir(filepath.Join(data, "clusters"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	if len(names) < 3 || !slices.Equal(names, dirs) {
		t.Fatalf("the sessions' live clusters %v and the clusters on disk %v: want the same, three or more (two learners', a warm one)", names, dirs)
	}

	self := nsOf(os.Getpid())
	if len(self) != len(nsKinds) {
		t.Fatalf("the server's namespaces: %v", self)
	}
	procs := markedProcesses(t, filepath.Join(data, "clusters"))
	cells := map[string]string{}  // namespaces of a cell -> its cluster
	groups := map[string]string{} // budget group -> its cluster
	for _, name := range names {
		dir := filepath.Join(data, "clusters", name)
		mine := procs[dir]
		var programs []string
		var cellNS, group string
		for _, pid := range mine {
			prog, err := clustertest.ProcessName(pid)
			if err != nil {
				continue // ended since (a step's short-lived process)
			}
			ns := nsOf(pid)
			g, err := cellGroupOf(pid, b)
			if err != nil {
				t.Errorf("cluster %s: %s (pid %d): %v", name, prog, pid, err)
				continue
			}
			if group == "" {
				group = g
			}
			if g != group {
				t.Errorf("cluster %s: %s (pid %d) is in group %s, its cluster's other processes in %s", name, prog, pid, g, group)
			}
			if prog == "bwrap" || prog == "nsenter" {
				continue // makes or enters the cell from outside; runs none of its programs
			}
			programs = append(programs, prog)
			for _, kind := range nsKinds {
				if ns[kind] == "" || ns[kind] == self[kind] {
					t.Errorf("cluster %s: %s (pid %d) shares the server's %s namespace (%s)", name, prog, pid, kind, ns[kind])
				}
			}
			key := fmt.Sprint(ns)
			if cellNS == "" {
				cellNS = key
			}
			if key != cellNS {
				t.Errorf("cluster %s: %s (pid %d) is in namespaces %s, the cluster's other programs in %s", name, prog, pid, key, cellNS)
			}
		}
		for _, want := range []string{"cell", "etcd", "kube-controlplane"} {
			if !slices.Contains(programs, want) {
				t.Errorf("cluster %s: no %s among its processes %v", name, want, programs)
			}
		}
		if other, ok := cells[cellNS]; ok && cellNS != "" {
			t.Errorf("clusters %s and %s share their namespaces %s", name, other, cellNS)
		}
		if other, ok := groups[group]; ok && group != "" {
			t.Errorf("clusters %s and %s share their budget group %s", name, other, group)
		}
		cells[cellNS], groups[group] = name, name
		t.Logf("cluster %s: %d processes %v in group %s", name, len(mine), programs, group)
	}

	// Nothing the server started runs outside those clusters.
	marked := map[int]bool{}
	for _, pids := range procs {
		for _, pid := range pids {
			marked[pid] = true
		}
	}
	for _, pid := range descendants(os.Getpid()) {
		if !marked[pid] {
			prog, err := clustertest.ProcessName(pid)
			if err != nil {
				continue // ended since
			}
			t.Errorf("the server's process %s (pid %d) belongs to no cluster", prog, pid)
		}
	}
}

// waitFor polls cond every half second until it holds, failing the test
// with what it last said after within.
func waitFor(t *testing.T, ctx context.Context, what string, within time.Duration, cond func() (string, bool)) {
	t.Helper()
	var last string
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, within, true, func(context.Context) (bool, error) {
		var ok bool
		last, ok = cond()
		return ok, nil
	}); err != nil {
		t.Fatalf("waiting for %s (last: %s): %v", what, last, err)
	}
}

// nsKinds are the namespaces a cell has of its own.
var nsKinds = []string{"user", "mnt", "net", "pid", "ipc", "uts"}

// nsOf returns process pid's namespaces by kind ("" where it has ended).
func nsOf(pid int) map[string]string {
	out := map[string]string{}
	for _, kind := range nsKinds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, kind))
		if err == nil {
			out[kind] = link
		}
	}
	return out
}

// markedProcesses returns the processes of the machine that carry, in their
// environment, the directory of a cluster under clusters
// (OPLAB_CLUSTER_DIR, which every process of a cluster inherits), by that
// directory.
func markedProcesses(t *testing.T, clusters string) map[string][]int {
	t.Helper()
	out := map[string][]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if dir, ok := strings.CutPrefix(string(kv), "OPLAB_CLUSTER_DIR="); ok && filepath.Dir(dir) == clusters {
				out[dir] = append(out[dir], pid)
			}
		}
	}
	return out
}

// descendants returns every process below pid.
func descendants(pid int) []int {
	var out []int
	kids, _ := clustertest.Children(pid)
	for _, k := range kids {
		out = append(out, k)
		out = append(out, descendants(k)...)
	}
	return out
}

// cellGroupOf returns the budget group process pid is in — the cell's
// group under oplab-cells, whose leaf "cluster" holds the cluster's
// processes — after checking that its memory, task and CPU controllers
// agree on it and that the group's ceiling and task bound are b's.
func cellGroupOf(pid int, b budget.Budget) (string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return "", err
	}
	paths := map[string]string{} // controller -> path
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			paths[c] = f[2]
		}
	}
	b = b.WithDefaults()
	type limit struct{ controller, file, want string }
	var limits []limit
	if _, v1 := paths["memory"]; v1 {
		limits = []limit{
			{"memory", "memory.limit_in_bytes", strconv.FormatInt(b.Memory, 10)},
			{"pids", "pids.max", strconv.FormatInt(b.Tasks, 10)},
			{"cpu", "cpu.shares", ""},
		}
	} else {
		limits = []limit{{"", "memory.max", strconv.FormatInt(b.Memory, 10)}, {"", "pids.max", strconv.FormatInt(b.Tasks, 10)}}
	}
	group := ""
	for _, l := range limits {
		p, ok := paths[l.controller]
		if !ok {
			return "", fmt.Errorf("in no %q cgroup:\n%s", l.controller, data)
		}
		leaf, cell := filepath.Base(p), filepath.Dir(p)
		if leaf != budget.LeafCluster || filepath.Base(filepath.Dir(cell)) != "oplab-cells" {
			return "", fmt.Errorf("its %s cgroup %s is not a cell's cluster leaf under oplab-cells", cmp.Or(l.controller, "unified"), p)
		}
		if group == "" {
			group = filepath.Base(cell)
		}
		if filepath.Base(cell) != group {
			return "", fmt.Errorf("its cgroups name two cells: %s and %s", group, filepath.Base(cell))
		}
		if l.want == "" {
			continue
		}
		mount := "/sys/fs/cgroup"
		if l.controller != "" {
			mount = filepath.Join(mount, l.controller)
		}
		got, err := os.ReadFile(filepath.Join(mount, cell, l.file))
		if err != nil {
			return "", err
		}
		if strings.TrimSpace(string(got)) != l.want {
			return "", fmt.Errorf("its cell's %s is %s, want %s", l.file, strings.TrimSpace(string(got)), l.want)
		}
	}
	return group, nil
}
