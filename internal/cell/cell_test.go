package cell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/walltest"
)

// programs builds the cell program and a stand-in server into one
// directory and returns another of links to them, the programs of the
// test's cells: a bin directory of links must work as one of files.
func programs(t *testing.T) (dir, init, answer string) {
	t.Helper()
	built, dir := t.TempDir(), t.TempDir()
	for name, pkg := range map[string]string{"cell": "oplab.dev/oplab/cmd/cell", "answer": "./testdata/answer"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(built, name), pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
		if err := os.Symlink(filepath.Join(built, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(dir, "cell"), filepath.Join(dir, "answer")
}

// probeOrSkip fails the test where cells cannot be made, or skips it
// where walltest's rule lets a wall go untested.
func probeOrSkip(t *testing.T, init string, user int) {
	t.Helper()
	walltest.Require(t, walltest.Cell, Probe(context.Background(), init, user))
}

// TestForwardAndJoin makes a cell in a directory whose path is longer than
// a socket's name may be, forwards a host port into it, runs a server in
// it with Join, and reaches that server through the forward; a port
// forwarded later over the control socket works too, and closing it frees
// the host's port.
//
// It runs once with the cell as the test's own user and, when the test runs
// as root, once as a user of the cell's own, whose processes the host sees
// as that user.
func TestForwardAndJoin(t *testing.T) {
	users := []int{0}
	if os.Geteuid() == 0 {
		users = append(users, 200000+os.Getpid()%30000)
	}
	progs, init, answer := programs(t)
	for _, user := range users {
		t.Run("user-"+strconv.Itoa(user), func(t *testing.T) { forwardAndJoin(t, progs, init, answer, user) })
	}
}

func forwardAndJoin(t *testing.T, progs, init, answer string, user int) {
	probeOrSkip(t, init, user)
	dir := filepath.Join(t.TempDir(), strings.Repeat("deep-directory-", 8))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 2)
	spec := Spec{Dir: dir, Init: init, Programs: []string{progs}, Forwards: ports[:1], User: user}
	group := cellGroup(t, fmt.Sprintf("celltest-%d-%d", os.Getpid(), user))
	spec.Cgroup = group.Procs(budget.LeafCluster)
	h, err := spec.Holder()
	if err != nil {
		t.Fatal(err)
	}
	holder := exec.Command(h.Path, h.Args...)
	holder.ExtraFiles = h.ExtraFiles
	holder.Stderr = os.Stderr
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Unshareflags: h.Unshareflags}
	if err := holder.Start(); err != nil {
		h.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); holder.Wait() })
	initPID, err := h.Started(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !InitAlive(holder.Process.Pid, initPID) {
		t.Fatalf("InitAlive(%d, %d): got false for the running cell", holder.Process.Pid, initPID)
	}
	if InitAlive(holder.Process.Pid, os.Getpid()) {
		t.Fatal("InitAlive: got true for a process that is not the cell's")
	}
	inGroup(t, initPID, group)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := WaitReady(ctx, dir, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	for i, port := range ports {
		if i == 1 {
			if err := Forward(ctx, dir, "late", port); err != nil {
				t.Fatalf("forward %d: %v", port, err)
			}
		}
		path, args, err := Join(spec, initPID, Limits{Files: 1024, Memory: 1 << 30}, answer, strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		srv := exec.CommandContext(ctx, path, args...)
		srv.Stderr = os.Stderr
		srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { syscall.Kill(-srv.Process.Pid, syscall.SIGKILL); srv.Wait() }()
		got := dialUntil(t, ctx, port)
		if !strings.HasPrefix(got, "in the cell as 65534") {
			t.Errorf("port %d: got %q, want the cell's server answering as uid 65534", port, got)
		}
		inGroup(t, leaf(t, srv.Process.Pid), group)
		if user != 0 {
			// nsenter's child is the server: the host sees the cell's user.
			status, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", srv.Process.Pid, srv.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			child := strings.TrimSpace(string(status))
			st, err := os.ReadFile("/proc/" + child + "/status")
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("Uid:\t%d\t%d\t%d\t%d", user, user, user, user); !strings.Contains(string(st), want) {
				t.Errorf("the server in the cell of user %d: /proc/%s/status lacks %q", user, child, want)
			}
		}
	}
	if err := CloseForwards(ctx, dir, "late"); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1])))
	if err != nil {
		t.Fatalf("the closed forward still holds the host's port %d: %v", ports[1], err)
	}
	l.Close()
}

// cellGroup makes a control group for a test's cell, or fails (skips
// where walltest's rule lets a wall go untested).
func cellGroup(t *testing.T, name string) *budget.Group {
	t.Helper()
	tree, err := budget.Open()
	walltest.Require(t, walltest.Budget, err)
	g, err := tree.Make(name, budget.Default)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Delete(); err != nil {
			t.Error(err)
		}
	})
	return g
}

// inGroup fails unless process pid is in g's cluster leaf in every
// hierarchy of g.
func inGroup(t *testing.T, pid int, g *budget.Group) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range g.Procs(budget.LeafCluster) {
		// .../<controller mount>/<path>/cluster/cgroup.procs names the
		// group /<path>/cluster, which /proc/PID/cgroup shows.
		dir := filepath.Dir(f)
		found := false
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			parts := strings.SplitN(line, ":", 3)
			if len(parts) == 3 && parts[2] != "/" && strings.HasSuffix(dir, parts[2]) {
				found = true
			}
		}
		if !found {
			t.Errorf("process %d is not in %s:\n%s", pid, dir, data)
		}
	}
}

// leaf follows pid's only child down to the process that has none: the
// program an nsenter runs.
func leaf(t *testing.T, pid int) int {
	t.Helper()
	for range 4 {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		f := strings.Fields(string(data))
		if err != nil || len(f) != 1 {
			return pid
		}
		pid, _ = strconv.Atoi(f[0])
	}
	return pid
}

func dialUntil(t *testing.T, ctx context.Context, port int) string {
	t.Helper()
	for {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			b, _ := io.ReadAll(c)
			c.Close()
			if len(b) > 0 {
				return string(b)
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("nothing answered on port %d through the cell: %v", port, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func freePorts(t *testing.T, n int) []int {
	var out []int
	for len(out) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	return out
}

// TestHolderPortTaken: a forward whose host port another process holds
// fails Holder with EADDRINUSE, which the embedded provider answers with
// other ports, and releases what it opened before: the port forwarded
// before it is free again.
func TestHolderPortTaken(t *testing.T) {
	ports := freePorts(t, 1)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	spec := Spec{Dir: t.TempDir(), Init: "/nonexistent/cell", Forwards: []int{ports[0], taken.Addr().(*net.TCPAddr).Port}}
	h, err := spec.Holder()
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("Holder: got %v, %v; want EADDRINUSE", h, err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])))
	if err != nil {
		t.Fatalf("the port forwarded before the taken one was not released: %v", err)
	}
	l.Close()
}
