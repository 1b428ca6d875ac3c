package kind

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// Container ids as Docker makes them: 64 hex digits.
var (
	nodeID  = strings.Repeat("a1", 32)
	otherID = strings.Repeat("b2", 32)
)

func TestParseCgroupMounts(t *testing.T) {
	tests := []struct {
		name      string
		mountinfo string
		want      []cgroupRoot
	}{
		{
			name: "hybrid: v1 freezer and v2 unified",
			mountinfo: `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`,
			want: []cgroupRoot{{mount: "/sys/fs/cgroup/freezer", root: "/"}, {mount: "/sys/fs/cgroup/unified", root: "/", v2: true}},
		},
		{
			name:      "v2 only, with optional fields before the separator",
			mountinfo: "29 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n",
			want:      []cgroupRoot{{mount: "/sys/fs/cgroup", root: "/", v2: true}},
		},
		{
			name:      "v1 freezer co-mounted, namespaced root",
			mountinfo: "37 31 0:34 /docker/x /sys/fs/cgroup/cpu,freezer ro - cgroup cgroup rw,cpu,freezer\n",
			want:      []cgroupRoot{{mount: "/sys/fs/cgroup/cpu,freezer", root: "/docker/x"}},
		},
		{
			name:      "no freezable hierarchy",
			mountinfo: "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\nbroken line\n",
			want:      nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseCgroupMounts([]byte(tt.mountinfo)); !slices.Equal(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// fakeHost is a temporary directory laid out like a host's /sys/fs/cgroup
// (a v1 freezer hierarchy and a v2 unified one) and /proc. Its write
// stands in for the kernel: on v2, a thaw also clears cgroup.events.
type fakeHost struct {
	t        testing.TB
	dir      string
	cg       *cgroupFS
	writes   []string
	readOnly map[string]bool // cgroups whose writes the "kernel" ignores
}

func newFakeHost(t testing.TB) *fakeHost {
	dir := t.TempDir()
	h := &fakeHost{t: t, dir: dir, readOnly: map[string]bool{}}
	h.cg = &cgroupFS{
		proc: filepath.Join(dir, "proc"),
		roots: []cgroupRoot{
			{mount: filepath.Join(dir, "freezer"), root: "/"},
			{mount: filepath.Join(dir, "unified"), root: "/", v2: true},
		},
		write: h.write,
	}
	for _, r := range h.cg.roots {
		h.mkdir(r.mount)
	}
	return h
}

func (h *fakeHost) write(path string, data []byte) error {
	h.writes = append(h.writes, strings.TrimPrefix(path, h.dir)+"="+string(data))
	if h.readOnly[filepath.Dir(path)] {
		return nil
	}
	if filepath.Base(path) == "cgroup.freeze" && string(data) == "0" {
		h.file(filepath.Join(filepath.Dir(path), "cgroup.events"), "populated 1\nfrozen 0\n")
	}
	return os.WriteFile(path, data, 0o644)
}

func (h *fakeHost) mkdir(path string) string {
	h.t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		h.t.Fatal(err)
	}
	return path
}

func (h *fakeHost) file(path, content string) {
	h.t.Helper()
	h.mkdir(filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// v1 makes a freezer cgroup at rel with state and processes.
func (h *fakeHost) v1(rel, state string, pids ...int) string {
	dir := h.mkdir(filepath.Join(h.dir, "freezer", rel))
	h.file(filepath.Join(dir, "freezer.state"), state+"\n")
	h.file(filepath.Join(dir, "freezer.self_freezing"), map[bool]string{true: "1\n", false: "0\n"}[state != "THAWED"])
	h.file(filepath.Join(dir, "cgroup.procs"), joinPIDs(pids))
	return dir
}

// v2 makes a unified cgroup at rel; self says whether it was frozen by a
// write to it, frozen whether it is frozen at all.
func (h *fakeHost) v2(rel string, self, frozen bool, pids ...int) string {
	dir := h.mkdir(filepath.Join(h.dir, "unified", rel))
	h.file(filepath.Join(dir, "cgroup.freeze"), map[bool]string{true: "1\n", false: "0\n"}[self])
	h.file(filepath.Join(dir, "cgroup.events"), fmt.Sprintf("populated 1\nfrozen %d\n", map[bool]int{true: 1, false: 0}[frozen]))
	h.file(filepath.Join(dir, "cgroup.procs"), joinPIDs(pids))
	return dir
}

// proc makes /proc/<pid> with a stat line, a command line and a wait
// channel, and the process's cgroups.
func (h *fakeHost) proc(pid int, comm, state, cmdline, wchan, cgroups string) {
	dir := filepath.Join(h.cg.proc, fmt.Sprint(pid))
	h.file(filepath.Join(dir, "stat"), fmt.Sprintf("%d (%s) %s 1 1 0 -1 4194560\n", pid, comm, state))
	h.file(filepath.Join(dir, "cmdline"), cmdline)
	h.file(filepath.Join(dir, "wchan"), wchan)
	h.file(filepath.Join(dir, "cgroup"), cgroups)
}

func (h *fakeHost) state(dir string) string {
	h.t.Helper()
	s, _, ok := freezeState(dir)
	if !ok {
		h.t.Fatalf("%s has no freezer state", dir)
	}
	return s
}

func joinPIDs(pids []int) string {
	var b strings.Builder
	for _, p := range pids {
		fmt.Fprintln(&b, p)
	}
	return b.String()
}

func TestContainerCgroups(t *testing.T) {
	h := newFakeHost(t)
	node := h.v1("docker/"+nodeID, "THAWED", 100)
	h.v1("docker/"+otherID, "THAWED", 200)
	// The node's init sits in a child of the node's cgroup, and on this
	// hybrid host in the v2 root: the root must not be taken for the node's.
	h.proc(100, "systemd", "S", "/sbin/init\x00", "0", "6:freezer:/docker/"+nodeID+"/init.scope\n1:name=systemd:/docker/"+nodeID+"\n0::/\n")
	// Found only by searching: a v2 node of the systemd driver whose
	// process has gone.
	v2node := h.v2("system.slice/docker-"+otherID+".scope", false, false)
	// A namespaced mount: the hierarchy's /outer is mounted at the root.
	ns := newFakeHost(t)
	ns.cg.roots[0].root = "/outer"
	nsNode := ns.v1("docker/"+nodeID, "THAWED", 300)
	ns.proc(300, "systemd", "S", "/sbin/init\x00", "0", "4:freezer:/outer/docker/"+nodeID+"\n")

	tests := []struct {
		name string
		cg   *cgroupFS
		id   string
		pid  int
		want []string
	}{
		{"by the init's /proc cgroup, cut after the id", h.cg, nodeID, 100, []string{node}},
		{"by search when there is no init", h.cg, nodeID, 0, []string{node}},
		{"by search when the init is gone", h.cg, otherID, 4242, []string{filepath.Join(h.dir, "freezer/docker", otherID), v2node}},
		{"a namespaced mount's root is cut off", ns.cg, nodeID, 300, []string{nsNode}},
		{"an unknown container has none", h.cg, strings.Repeat("c3", 32), 0, nil},
		{"a short id matches nothing", h.cg, "a1", 100, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.cg.containerCgroups(tt.id, tt.pid); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestThawTreeV1 lays out a node as kind's containerd nests pods on
// cgroup v1: a pod's slice frozen by itself, its container frozen through
// it, and another pod's container frozen by itself with a `runc init`
// stuck inside. Every one is thawed, parents first; another node's frozen
// cgroup is not touched.
func TestThawTreeV1(t *testing.T) {
	h := newFakeHost(t)
	node := h.v1("docker/"+nodeID, "THAWED", 100)
	pods := "docker/" + nodeID + "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
	podA := h.v1(pods+"kubelet-kubepods-besteffort-poda.slice", "FROZEN")
	ctrA := h.v1(pods+"kubelet-kubepods-besteffort-poda.slice/cri-containerd-aaa.scope", "FROZEN", 4001)
	ctrB := h.v1(pods+"kubelet-kubepods-besteffort-podb.slice/cri-containerd-bbb.scope", "FREEZING", 4002, 4003)
	quiet := h.v1(pods+"kubelet-kubepods-besteffort-podc.slice/cri-containerd-ccc.scope", "THAWED", 4004)
	other := h.v1("docker/"+otherID+"/kubelet.slice/cri-containerd-ddd.scope", "FROZEN", 5001)
	h.proc(4001, "pause", "D", "/pause\x00", "0", "")
	h.proc(4002, "runc:[2:INIT]", "D", "runc\x00init\x00", "unix_stream_read_generic", "")
	h.proc(4003, "sh", "S", "", "do_wait", "") // a kernel-less cmdline: the comm stands in
	h.proc(4004, "pause", "S", "/pause\x00", "0", "")

	found := h.cg.thawTree(t.Context(), node)

	var got []string
	for _, f := range found {
		if f.Err != nil {
			t.Errorf("%s: got error %v, want it thawed", f.Path, f.Err)
		}
		got = append(got, f.State+" "+strings.TrimPrefix(f.Path, node)+": "+listProcesses(f.Procs))
	}
	want := []string{
		"FROZEN /kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-poda.slice: none",
		"FROZEN /kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-poda.slice/cri-containerd-aaa.scope: 4001 /pause (state D)",
		"FREEZING /kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-podb.slice/cri-containerd-bbb.scope: 4002 runc init (state D, in unix_stream_read_generic); 4003 [sh] (state S, in do_wait)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("found frozen:\n got %q\nwant %q", got, want)
	}
	for _, dir := range []string{node, podA, ctrA, ctrB, quiet} {
		if s := h.state(dir); s != "THAWED" {
			t.Errorf("%s: got %s, want THAWED", strings.TrimPrefix(dir, h.dir), s)
		}
	}
	if s := h.state(other); s != "FROZEN" {
		t.Errorf("another node's cgroup: got %s, want it left FROZEN", s)
	}
	if len(h.writes) != 3 {
		t.Errorf("writes: got %q, want one per frozen cgroup", h.writes)
	}
	if again := h.cg.thawTree(t.Context(), node); len(again) != 0 {
		t.Errorf("second thaw found %d frozen cgroups, want 0", len(again))
	}
}

// TestThawTreeV2: on cgroup v2 a cgroup frozen by a write to cgroup.freeze
// is thawed by writing 0 there; its children, frozen only through it,
// need no write.
func TestThawTreeV2(t *testing.T) {
	h := newFakeHost(t)
	node := h.v2("system.slice/docker-"+nodeID+".scope", false, false, 100)
	pod := h.v2("system.slice/docker-"+nodeID+".scope/kubelet.slice/pod1", true, true)
	ctr := h.v2("system.slice/docker-"+nodeID+".scope/kubelet.slice/pod1/cri-containerd-aaa.scope", false, true, 4001)
	h.proc(4001, "pause", "D", "/pause\x00", "0", "")
	// The fake kernel clears only the written cgroup's events; the real one
	// clears the children's too, as this stands for.
	h.file(filepath.Join(ctr, "cgroup.events"), "populated 1\nfrozen 0\n")

	found := h.cg.thawTree(t.Context(), node)
	if len(found) != 1 || found[0].Path != pod || found[0].State != "frozen" || found[0].Err != nil {
		t.Fatalf("found: got %+v, want only %s, thawed", found, pod)
	}
	if want := []string{strings.TrimPrefix(pod, h.dir) + "/cgroup.freeze=0"}; !slices.Equal(h.writes, want) {
		t.Errorf("writes: got %q, want %q", h.writes, want)
	}
	if s := h.state(pod); s != "thawed" {
		t.Errorf("pod: got %s, want thawed", s)
	}
}

// TestThawTreeFailures: a cgroup the kernel will not thaw, or that cannot
// be written, is reported with why; the others are still thawed.
func TestThawTreeFailures(t *testing.T) {
	h := newFakeHost(t)
	node := h.v1("docker/"+nodeID, "THAWED")
	stays := h.v1("docker/"+nodeID+"/a", "FROZEN", 4001)
	denied := h.v1("docker/"+nodeID+"/b", "FROZEN")
	thaws := h.v1("docker/"+nodeID+"/c", "FROZEN")
	h.proc(4001, "runc:[2:INIT]", "D", "runc\x00init\x00", "unix_stream_read_generic", "")
	h.readOnly[stays] = true
	h.cg.write = func(path string, data []byte) error {
		if filepath.Dir(path) == denied {
			return &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}
		}
		return h.write(path, data)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	found := h.cg.thawTree(ctx, node)

	errs := map[string]string{}
	for _, f := range found {
		errs[filepath.Base(f.Path)] = fmt.Sprint(f.Err)
	}
	if !strings.Contains(errs["a"], "still FROZEN after writing the thaw") {
		t.Errorf("a cgroup that stays frozen: got %q, want it said still FROZEN", errs["a"])
	}
	if !strings.Contains(errs["b"], "permission denied") {
		t.Errorf("a cgroup that cannot be written: got %q, want permission denied", errs["b"])
	}
	if errs["c"] != "<nil>" {
		t.Errorf("a cgroup that thaws: got error %q, want none", errs["c"])
	}
	if s := h.state(thaws); s != "THAWED" {
		t.Errorf("c: got %s, want THAWED", s)
	}
	// What a failed delete reports: the cgroup still frozen, with its
	// stuck process.
	left := h.cg.frozenIn(node)
	if len(left) != 2 || left[0].Path != stays || left[1].Path != denied || listProcesses(left[0].Procs) != "4001 runc init (state D, in unix_stream_read_generic)" {
		t.Errorf("frozen after the thaw: got %+v, want a/ with its runc init, and b/", left)
	}
}

func TestProcessesIn(t *testing.T) {
	h := newFakeHost(t)
	node := h.v1("docker/"+nodeID, "THAWED", 100)
	h.v1("docker/"+nodeID+"/x", "THAWED", 101, 102)
	h.proc(100, "systemd", "S", "/sbin/init\x00", "0", "")
	h.proc(101, "weird) name (", "D", "", "0", "")
	// 102 has no /proc entry: it exited meanwhile.
	got := listProcesses(h.cg.processesIn(node))
	if want := "101 [weird) name (] (state D); 100 /sbin/init (state S); 102 [gone]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// fakeNodes is a node container that cannot be removed while frozen.
type fakeNodes struct {
	frozen     bool
	refreeze   int // freezes again after this many thaws (0: never)
	thaws      int
	removes    int
	removable  bool // false: stuck even when thawed
	hangSecond bool // the second removal blocks until the deadline
	gone       bool
}

func (f *fakeNodes) remove(ctx context.Context) error {
	f.removes++
	if f.hangSecond && f.removes == 2 {
		<-ctx.Done()
		return ctx.Err()
	}
	if f.frozen || !f.removable {
		return errors.New("Error response from daemon: tried to kill container, but did not receive an exit event")
	}
	f.gone = true
	return nil
}

func (f *fakeNodes) thaw(context.Context) []frozenCgroup {
	f.thaws++
	if !f.frozen {
		if f.refreeze > 0 && f.thaws == f.refreeze {
			f.frozen = true // frozen while the removal ran
		}
		return nil
	}
	f.frozen = false
	return []frozenCgroup{{Path: "/sys/fs/cgroup/freezer/docker/x/pod", State: "FROZEN"}}
}

func (f *fakeNodes) stuck(context.Context) []string {
	return []string{"node container oplab-t-control-plane: processes left: 4002 runc init (state D)"}
}

// TestRemoveNodesCancelled: a caller that gives up is told so, not that
// the node is stuck.
func TestRemoveNodesCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	f := fakeNodes{frozen: true}
	err := removeNodes(ctx, &f, time.Minute, func(frozenCgroup) {})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrStuck) || !strings.Contains(err.Error(), "did not receive an exit event") {
		t.Errorf("got %v, want the caller's deadline with the engine's last message, not ErrStuck", err)
	}
}

func TestRemoveNodes(t *testing.T) {
	tests := []struct {
		name        string
		nodes       fakeNodes
		budget      time.Duration
		wantErr     []string // all in the message; none for success
		wantThawed  int
		wantRemoves int
	}{
		{name: "nothing frozen", nodes: fakeNodes{removable: true}, budget: time.Minute, wantRemoves: 1},
		{name: "frozen before: thawed first", nodes: fakeNodes{frozen: true, removable: true}, budget: time.Minute, wantThawed: 1, wantRemoves: 1},
		{name: "frozen during the first removal: thawed and retried", nodes: fakeNodes{refreeze: 1, removable: true}, budget: time.Minute, wantThawed: 1, wantRemoves: 2},
		{
			name: "never removable: says what is stuck", nodes: fakeNodes{frozen: true}, budget: 2500 * time.Millisecond,
			wantErr: []string{
				"node container cannot be removed after ", "(frozen cgroups thawed: 1)",
				"tried to kill container, but did not receive an exit event",
				"what holds it:\n  node container oplab-t-control-plane: processes left: 4002 runc init (state D)",
			},
			wantThawed: 1,
		},
		{
			name: "cut short by the deadline: the engine's message is kept", nodes: fakeNodes{hangSecond: true}, budget: 1500 * time.Millisecond,
			wantErr:     []string{"after 2 attempts", "did not receive an exit event"},
			wantRemoves: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := tt.nodes
			thawed := 0
			err := removeNodes(t.Context(), &f, tt.budget, func(frozenCgroup) { thawed++ })
			if len(tt.wantErr) == 0 {
				if err != nil || !f.gone {
					t.Fatalf("got %v (gone %v), want the nodes removed", err, f.gone)
				}
			} else {
				if !errors.Is(err, ErrStuck) {
					t.Fatalf("got %v, want ErrStuck", err)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q: want it to contain %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "context deadline exceeded") {
					t.Errorf("error %q: want the engine's message, not the deadline", err)
				}
			}
			if thawed != tt.wantThawed {
				t.Errorf("thawed: got %d, want %d", thawed, tt.wantThawed)
			}
			if tt.wantRemoves > 0 && f.removes != tt.wantRemoves {
				t.Errorf("removal attempts: got %d, want %d", f.removes, tt.wantRemoves)
			}
			if len(tt.wantErr) > 0 && f.removes < 2 && !tt.nodes.hangSecond {
				t.Errorf("removal attempts: got %d, want retries within %s", f.removes, tt.budget)
			}
		})
	}
}

// TestStuckReport: what a failed delete says of a node container: each
// frozen cgroup, whether by itself (with how to thaw it by hand) or through
// its parent, and its processes; or, with nothing frozen, the processes
// left, uninterruptible ones first.
func TestStuckReport(t *testing.T) {
	h := newFakeHost(t)
	h.v1("docker/"+nodeID, "THAWED", 100)
	pod := h.v1("docker/"+nodeID+"/kubelet.slice/pod1", "FROZEN")
	ctr := h.v1("docker/"+nodeID+"/kubelet.slice/pod1/cri-containerd-aaa.scope", "FROZEN", 4002)
	h.file(filepath.Join(ctr, "freezer.self_freezing"), "0\n")
	h.v1("docker/"+otherID, "THAWED", 200, 201)
	v2node := h.v2("system.slice/docker-"+strings.Repeat("c3", 32)+".scope", true, true, 300)
	h.proc(100, "systemd", "S", "/sbin/init\x00", "0", "")
	h.proc(4002, "runc:[2:INIT]", "D", "runc\x00init\x00", "unix_stream_read_generic", "")
	h.proc(200, "systemd", "S", "/sbin/init\x00", "0", "")
	h.proc(201, "pause", "D", "/pause\x00", "0", "")
	h.proc(300, "pause", "S", "/pause\x00", "0", "")

	tests := []struct {
		name string
		n    *engineNodes
		c    nodeContainer
		want []string
	}{
		{
			name: "a pod frozen by itself, its container through it",
			n:    &engineNodes{cg: h.cg}, c: nodeContainer{ID: nodeID, PID: 0},
			want: []string{
				"  cgroup " + pod + " is FROZEN (write THAWED to its freezer.state to let it go); processes: none",
				"  cgroup " + ctr + " is FROZEN (frozen through its parent); processes: 4002 runc init (state D, in unix_stream_read_generic)",
			},
		},
		{
			name: "v2",
			n:    &engineNodes{cg: h.cg}, c: nodeContainer{ID: strings.Repeat("c3", 32)},
			want: []string{"  cgroup " + v2node + " is frozen (write 0 to its cgroup.freeze to let it go); processes: 300 /pause (state S)"},
		},
		{
			name: "nothing frozen: the processes left",
			n:    &engineNodes{cg: h.cg}, c: nodeContainer{ID: otherID},
			want: []string{"  nothing frozen; processes left in " + filepath.Join(h.dir, "freezer/docker", otherID) + ": 201 /pause (state D); 200 /sbin/init (state S)"},
		},
		{
			name: "no cgroup of it",
			n:    &engineNodes{cg: h.cg}, c: nodeContainer{ID: strings.Repeat("d4", 32)},
			want: []string{"  no cgroup of it found"},
		},
		{
			name: "cgroups unreadable",
			n:    &engineNodes{cgErr: errors.New("read the cgroup mounts: permission denied")}, c: nodeContainer{ID: nodeID},
			want: []string{"  its cgroups cannot be read: read the cgroup mounts: permission denied"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.n.cgroupsOf(tt.c); !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// BenchmarkThawTreeNothingFrozen is what every Delete pays before it
// removes a healthy node: a walk of the node's freezer tree. The tree is
// laid out like a kind node running 40 pods of two containers each.
func BenchmarkThawTreeNothingFrozen(b *testing.B) {
	h := newFakeHost(b)
	node := filepath.Join(h.cg.roots[0].mount, "docker", nodeID)
	n := 0
	mk := func(rel string) {
		dir := filepath.Join(node, rel)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "freezer.state"), []byte("THAWED\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		n++
	}
	mk(".")
	mk("kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice")
	for p := range 40 {
		pod := fmt.Sprintf("kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/pod%d.slice", p)
		mk(pod)
		mk(pod + "/cri-containerd-sandbox.scope")
		mk(pod + "/cri-containerd-a.scope")
		mk(pod + "/cri-containerd-b.scope")
	}
	b.ResetTimer()
	for b.Loop() {
		if found := h.cg.thawTree(b.Context(), node); len(found) != 0 {
			b.Fatalf("found %d frozen, want 0", len(found))
		}
	}
	b.ReportMetric(float64(n), "cgroups/op")
}
