package kind

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Why a node container can need thawing: a kind node's own containerd runs
// the pods' containers in cgroups nested under the node's cgroup. runc
// freezes a cgroup to signal every process in it, and on cgroup v1 a pod
// container's freezer cgroup can be left FROZEN with a `runc init` stuck
// inside (seen on this project's machine after a pod delete during
// `kubectl exec`, and after a bare create). A frozen task does not die of
// SIGKILL on v1, so the node's init never finishes and the engine gives up
// removing the node: "tried to kill container, but did not receive an exit
// event". The engine's runc thaws only the node's own cgroup, which leaves
// a nested cgroup frozen by itself frozen. Writing THAWED there lets the
// node go. On cgroup v2 a frozen task does die of SIGKILL, but a frozen
// cgroup is thawed the same way (cgroup.freeze), so both are handled.

// cgroupFS is where the host's freezable cgroup hierarchies are mounted.
type cgroupFS struct {
	proc  string // the proc file system, "/proc"
	roots []cgroupRoot
	// write is os.WriteFile's job; a test stands in for the kernel here.
	write func(path string, data []byte) error
}

// cgroupRoot is one mounted hierarchy that can freeze.
type cgroupRoot struct {
	mount string // where it is mounted: "/sys/fs/cgroup/freezer"
	root  string // the hierarchy's path at the mount point (mountinfo's 4th field), "/" unless namespaced
	v2    bool   // the unified hierarchy: cgroup.freeze instead of freezer.state
}

// frozenCgroup is a cgroup found frozen, with what ran in it then.
type frozenCgroup struct {
	Path  string    // absolute path of the cgroup's directory
	State string    // "FROZEN" or "FREEZING" (v1), "frozen" (v2)
	Procs []process // the processes in it when found
	Err   error     // why it could not be thawed, if it could not
	// Inherited: frozen only because a parent is, so thawing the parent
	// thaws it (frozenIn sets it).
	Inherited bool
}

// remedy says how a person thaws the cgroup by hand.
func (f frozenCgroup) remedy() string {
	if f.Inherited {
		return "frozen through its parent"
	}
	if _, err := os.Stat(filepath.Join(f.Path, "freezer.state")); err == nil || f.State != "frozen" {
		return "write THAWED to its freezer.state to let it go"
	}
	return "write 0 to its cgroup.freeze to let it go"
}

// process is one process of a cgroup, as /proc shows it.
type process struct {
	PID   int
	State string // "D", "S", ...; "" when the process is gone
	Wchan string // where it sleeps in the kernel, when known
	Cmd   string
}

func (p process) String() string {
	s := strconv.Itoa(p.PID) + " " + p.Cmd
	var how []string
	if p.State != "" {
		how = append(how, "state "+p.State)
	}
	if p.Wchan != "" {
		how = append(how, "in "+p.Wchan)
	}
	if len(how) > 0 {
		s += " (" + strings.Join(how, ", ") + ")"
	}
	return s
}

// hostCgroups reads /proc/self/mountinfo for the v1 freezer hierarchy and
// the v2 unified hierarchy. A hybrid host has both; it is not assumed which
// one the engine uses: each is searched for the container.
func hostCgroups() (*cgroupFS, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read the cgroup mounts: %w", err)
	}
	return &cgroupFS{proc: "/proc", roots: parseCgroupMounts(data), write: writeFile}, nil
}

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }

// parseCgroupMounts picks the freezable hierarchies out of mountinfo lines:
// "36 25 0:31 / /sys/fs/cgroup/freezer rw,... - cgroup cgroup rw,freezer".
// The first mount of each hierarchy wins.
func parseCgroupMounts(mountinfo []byte) []cgroupRoot {
	var v1, v2 *cgroupRoot
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := slices.Index(f, "-")
		if sep < 5 || len(f) < sep+4 {
			continue
		}
		r := cgroupRoot{mount: f[4], root: f[3]}
		switch fstype := f[sep+1]; {
		case fstype == "cgroup2" && v2 == nil:
			r.v2 = true
			v2 = &r
		case fstype == "cgroup" && v1 == nil && slices.Contains(strings.Split(f[sep+3], ","), "freezer"):
			v1 = &r
		}
	}
	var roots []cgroupRoot
	for _, r := range []*cgroupRoot{v1, v2} {
		if r != nil {
			roots = append(roots, *r)
		}
	}
	return roots
}

// searchDepth bounds the search for a container's cgroup by its id:
// Docker's are at depth 2 ("docker/<id>", "system.slice/docker-<id>.scope"),
// rootless Podman's at depth 5.
const searchDepth = 6

// containerCgroups returns the container's own cgroup directory in each
// freezable hierarchy that has one. pid, when not 0, is the container's
// init: its /proc/<pid>/cgroup names the directory; otherwise, or when that
// fails, the hierarchy is searched for a directory named with the id. Only
// a directory whose path names the container's id is returned, so a shared
// parent (the v2 root on a hybrid host) is never taken for the container's.
func (c *cgroupFS) containerCgroups(id string, pid int) []string {
	if len(id) < 12 {
		return nil // not a container id: it would match too much
	}
	var own map[string]string // controllers → path, from /proc/<pid>/cgroup
	if pid > 0 {
		own = c.procCgroups(pid)
	}
	var dirs []string
	for _, r := range c.roots {
		key := "freezer"
		if r.v2 {
			key = ""
		}
		dir := ""
		if p, ok := own[key]; ok {
			if rel, ok := containerPrefix(relativeTo(p, r.root), id); ok {
				dir = filepath.Join(r.mount, rel)
			}
		}
		if _, err := os.Stat(dir); dir == "" || err != nil {
			dir = searchCgroup(r.mount, id, searchDepth)
		}
		if dir != "" {
			dirs = append(dirs, dir)
		}
	}
	return dirs
}

// procCgroups reads /proc/<pid>/cgroup ("6:freezer:/docker/<id>", and
// "0::/..." for v2) into the v1 freezer's path under "freezer" and v2's
// under "".
func (c *cgroupFS) procCgroups(pid int) map[string]string {
	data, err := os.ReadFile(filepath.Join(c.proc, strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] == "0" && f[1] == "":
			out[""] = f[2]
		case slices.Contains(strings.Split(f[1], ","), "freezer"):
			out["freezer"] = f[2]
		}
	}
	return out
}

// relativeTo makes a path of /proc/<pid>/cgroup relative to the mount's
// root in the hierarchy.
func relativeTo(path, root string) string {
	if root == "/" || root == "" {
		return path
	}
	if rest, ok := strings.CutPrefix(path, root); ok && (rest == "" || rest[0] == '/') {
		return rest
	}
	return path
}

// containerPrefix cuts path after its first element that names id:
// "/docker/<id>/init.scope" → "/docker/<id>".
func containerPrefix(path, id string) (string, bool) {
	elems := strings.Split(path, "/")
	for i, e := range elems {
		if strings.Contains(e, id) {
			return strings.Join(elems[:i+1], "/"), true
		}
	}
	return "", false
}

// searchCgroup finds, breadth first, the shallowest directory under mount
// whose name contains id.
func searchCgroup(mount, id string, depth int) string {
	level := []string{mount}
	for d := 0; d < depth && len(level) > 0; d++ {
		var next []string
		for _, dir := range level {
			entries, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range entries {
				if !e.IsDir() {
					continue
				}
				p := filepath.Join(dir, e.Name())
				if strings.Contains(e.Name(), id) {
					return p
				}
				next = append(next, p)
			}
		}
		level = next
	}
	return ""
}

// freezeState reads whether dir is frozen by itself or by its parent. ok is
// false when dir has no freezer files (not a freezable cgroup, or gone).
func freezeState(dir string) (state string, frozen, ok bool) {
	if b, err := os.ReadFile(filepath.Join(dir, "freezer.state")); err == nil {
		state = strings.TrimSpace(string(b))
		return state, state != "THAWED", true
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return "", false, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, found := strings.CutPrefix(line, "frozen "); found {
			if strings.TrimSpace(v) == "1" {
				return "frozen", true, true
			}
			return "thawed", false, true
		}
	}
	return "", false, false // a kernel before 5.2: v2 cannot freeze
}

// selfFrozen reports whether dir was frozen by a write to it, rather than
// by its parent: only those need a write to thaw. A v1 FREEZING state
// counts too, since it means a freeze is still being attempted.
func selfFrozen(dir string) (state string, yes bool) {
	if b, err := os.ReadFile(filepath.Join(dir, "freezer.state")); err == nil {
		state = strings.TrimSpace(string(b))
		return state, state != "THAWED" && state != ""
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cgroup.freeze")); err == nil {
		return "frozen", strings.TrimSpace(string(b)) == "1"
	}
	return "", false
}

// thawDir writes the thawing value of dir's hierarchy.
func (c *cgroupFS) thawDir(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "freezer.state")); err == nil {
		return c.write(filepath.Join(dir, "freezer.state"), []byte("THAWED"))
	}
	return c.write(filepath.Join(dir, "cgroup.freeze"), []byte("0"))
}

// thawWait bounds how long a written thaw may take to show; the kernel's
// is immediate on v1 and a scheduling round on v2.
const thawWait = 10 * time.Second

// thawTree thaws every frozen cgroup of the tree at dir, parents before
// children (a parent's thaw also lifts its children's inherited freeze, so
// each state is read when its turn comes), and waits until each reads
// thawed. It returns the cgroups it found frozen, each with its processes
// and, if it could not be thawed, why. A tree that vanishes meanwhile (the
// container went) is not an error.
func (c *cgroupFS) thawTree(ctx context.Context, dir string) []frozenCgroup {
	var found []frozenCgroup
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil // gone meanwhile, or unreadable: nothing to thaw there
		}
		state, yes := selfFrozen(path)
		if !yes {
			return nil
		}
		f := frozenCgroup{Path: path, State: state, Procs: c.processes(path)}
		if err := c.thawDir(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			f.Err = fmt.Errorf("write: %w", err)
		}
		found = append(found, f)
		return nil
	})
	ctx, cancel := context.WithTimeout(ctx, thawWait)
	defer cancel()
	for i := range found {
		if found[i].Err == nil {
			found[i].Err = waitThawed(ctx, found[i].Path)
		}
	}
	return found
}

// waitThawed polls dir's state until it reads thawed or is gone.
func waitThawed(ctx context.Context, dir string) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		state, frozen, ok := freezeState(dir)
		if !ok || !frozen {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("still %s after writing the thaw: %w", state, ctx.Err())
		case <-tick.C:
		}
	}
}

// frozenIn lists the cgroups of the tree at dir that are frozen now, by
// themselves or by a parent, with their processes: what holds a node
// container that cannot be removed.
func (c *cgroupFS) frozenIn(dir string) []frozenCgroup {
	var found []frozenCgroup
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if state, frozen, ok := freezeState(path); ok && frozen {
			_, self := selfFrozen(path)
			if b, err := os.ReadFile(filepath.Join(path, "freezer.self_freezing")); err == nil {
				self = strings.TrimSpace(string(b)) == "1" // FREEZING through a parent is not self
			}
			found = append(found, frozenCgroup{Path: path, State: state, Procs: c.processes(path), Inherited: !self})
		}
		return nil
	})
	return found
}

// processesIn lists the processes left anywhere in the tree at dir,
// uninterruptible ones (state D, what a frozen or stuck task shows) first.
func (c *cgroupFS) processesIn(dir string) []process {
	var ps []process
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			ps = append(ps, c.processes(path)...)
		}
		return nil
	})
	slices.SortStableFunc(ps, func(a, b process) int {
		switch {
		case a.State == "D" && b.State != "D":
			return -1
		case b.State == "D" && a.State != "D":
			return 1
		}
		return 0
	})
	return ps
}

// processes reads the processes of one cgroup (not its children).
func (c *cgroupFS) processes(dir string) []process {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var ps []process
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		ps = append(ps, c.process(pid))
	}
	return ps
}

// maxCmd bounds a command line in a message.
const maxCmd = 120

// process reads a process's state, wait channel and command line.
func (c *cgroupFS) process(pid int) process {
	p := process{PID: pid}
	dir := filepath.Join(c.proc, strconv.Itoa(pid))
	if b, err := os.ReadFile(filepath.Join(dir, "stat")); err == nil {
		// "1234 (comm) S 1 ...": the comm may hold spaces and parentheses.
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 {
			if f := strings.Fields(s[i+1:]); len(f) > 0 {
				p.State = f[0]
			}
			if j := strings.IndexByte(s, '('); j >= 0 && j < i {
				p.Cmd = "[" + s[j+1:i] + "]"
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "wchan")); err == nil {
		if w := strings.TrimSpace(string(b)); w != "" && w != "0" {
			p.Wchan = w
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "cmdline")); err == nil && len(b) > 0 {
		p.Cmd = strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	}
	if p.Cmd == "" {
		p.Cmd = "[gone]"
	}
	if len(p.Cmd) > maxCmd {
		p.Cmd = p.Cmd[:maxCmd] + "…"
	}
	return p
}
