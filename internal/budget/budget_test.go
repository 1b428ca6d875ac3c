package budget_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/walltest"
)

// The test binary is also the child a test runs in a group: BUDGET_CHILD
// says what it does once it has joined the groups in BUDGET_PROCS.
func TestMain(m *testing.M) {
	if what := os.Getenv("BUDGET_CHILD"); what != "" {
		os.Exit(child(what))
	}
	os.Exit(m.Run())
}

func child(what string) int {
	// Join as the cell program does (package cell's enter).
	for _, f := range strings.Split(os.Getenv("BUDGET_PROCS"), ",") {
		if err := os.WriteFile(f, []byte("0"), 0); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
	}
	switch what {
	case "alloc": // more memory than the group has, touched page by page
		var keep [][]byte
		for range 1024 {
			b := make([]byte, 1<<20)
			for i := range b {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		fmt.Println(len(keep), "MiB held")
		return 0
	case "fork": // more processes than the group may hold
		var started []*exec.Cmd
		defer func() {
			for _, c := range started {
				c.Process.Kill()
				c.Wait()
			}
		}()
		for i := range 400 {
			c := exec.Command("sleep", "30")
			if err := c.Start(); err != nil {
				fmt.Printf("refused after %d: %v\n", i, err)
				return 0
			}
			started = append(started, c)
		}
		fmt.Println("400 started")
		return 0
	case "spin": // busy until killed
		for {
		}
	case "sleep":
		time.Sleep(time.Minute)
		return 0
	}
	return 2
}

// openTree makes the cells' parent group, or fails saying why (skips
// where walltest's rule lets a wall go untested).
func openTree(t *testing.T) *budget.Tree {
	t.Helper()
	tr, err := budget.Open()
	walltest.Require(t, walltest.Budget, err)
	return tr
}

func makeCell(t *testing.T, b budget.Budget) *budget.Group {
	t.Helper()
	name := fmt.Sprintf("test-%s-%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), os.Getpid())
	g, err := openTree(t).Make(name, b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Delete(); err != nil {
			t.Errorf("delete the group: %v", err)
		}
	})
	return g
}

func runChild(t *testing.T, g *budget.Group, leaf, what string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BUDGET_CHILD="+what, "BUDGET_PROCS="+strings.Join(g.Procs(leaf), ","))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func killedBy(err error) syscall.Signal {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal()
		}
	}
	return 0
}

// A cell that asks for more memory than its budget has a process killed,
// the group counts it, and nothing outside the group is touched.
func TestMemoryCeiling(t *testing.T) {
	g := makeCell(t, budget.Budget{Memory: 256 << 20, Tasks: 512}.WithDefaults())
	out, err := runChild(t, g, budget.LeafCluster, "alloc")
	if sig := killedBy(err); sig != syscall.SIGKILL {
		t.Fatalf("a process allocating 1 GiB in a 256 MiB cell was not killed by the kernel: %v\n%s", err, out)
	}
	u, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.OOMKills == 0 {
		t.Errorf("usage counts no OOM kill: %+v", u)
	}
	if u.MemoryLimit != 256<<20 {
		t.Errorf("the group's memory limit is %d, want %d", u.MemoryLimit, 256<<20)
	}
	// The kernel may charge a page or so past the limit before it kills
	// (cgroup v1's max_usage_in_bytes read 256 MiB + 4 KiB once).
	if u.MemoryPeak > 256<<20+1<<20 || u.MemoryPeak < 128<<20 {
		t.Errorf("the group's peak is %d, want it near its ceiling of 256 MiB", u.MemoryPeak)
	}
}

// The console's leaf has a ceiling of its own, below the cell's.
func TestConsoleCeiling(t *testing.T) {
	g := makeCell(t, budget.Budget{Memory: 1 << 30, Tasks: 512}.WithDefaults())
	out, err := runChild(t, g, budget.LeafConsole, "alloc")
	if sig := killedBy(err); sig != syscall.SIGKILL {
		t.Fatalf("a console process allocating 1 GiB under a %d MiB ceiling was not killed: %v\n%s", budget.ConsoleMemory>>20, err, out)
	}
	if u, err := g.Usage(); err != nil || u.ConsoleOOMKills != 1 || u.OOMKills != 0 {
		t.Errorf("usage after the console's kill: %+v, %v; want one console kill and none of the cluster's", u, err)
	}
	// The same work fits the cluster's leaf of a 2 GiB cell.
	g2 := makeCell(t, budget.Budget{Memory: 2 << 30, Tasks: 512}.WithDefaults())
	if out, err := runChild(t, g2, budget.LeafCluster, "alloc"); err != nil {
		t.Fatalf("1 GiB in a 2 GiB cell: %v\n%s", err, out)
	}
}

// A cell cannot start more tasks than its bound.
func TestTaskBound(t *testing.T) {
	g := makeCell(t, budget.Budget{Memory: 1 << 30, Tasks: 128}.WithDefaults())
	out, err := runChild(t, g, budget.LeafCluster, "fork")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "refused after ") {
		t.Fatalf("a cell bounded to 128 tasks started 400 processes: %s", out)
	}
	n, _ := strconv.Atoi(strings.Fields(strings.TrimPrefix(out, "refused after "))[0])
	if n >= 128 {
		t.Errorf("refused only after %d processes, the bound is 128 tasks", n)
	}
}

// Delete leaves no process of the group running and no group behind.
func TestDeleteKillsWhatIsLeft(t *testing.T) {
	tr := openTree(t)
	g, err := tr.Make(fmt.Sprintf("test-delete-%d", os.Getpid()), budget.Default)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BUDGET_CHILD=sleep", "BUDGET_PROCS="+strings.Join(g.Procs(budget.LeafCluster), ","))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Wait until the child is in the group in every hierarchy.
	pid := strconv.Itoa(cmd.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); ; {
		in := 0
		for _, f := range g.Procs(budget.LeafCluster) {
			if data, err := os.ReadFile(f); err == nil && slices.Contains(strings.Fields(string(data)), pid) {
				in++
			}
		}
		if in == len(g.Procs(budget.LeafCluster)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child joined %d of the group's %d hierarchies", in, len(g.Procs(budget.LeafCluster)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
	if sig := killedBy(<-done); sig != syscall.SIGKILL {
		t.Errorf("the process left in the group was not killed")
	}
	for _, f := range g.Procs(budget.LeafCluster) {
		if _, err := os.Stat(filepath.Dir(filepath.Dir(f))); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there: %v", filepath.Dir(filepath.Dir(f)), err)
		}
	}
	// A cell stopped asleep has no group: ending it thaws nothing, and
	// says so as a group that does not exist.
	for verb, f := range map[string]func() error{"thaw": g.Thaw, "freeze": g.Freeze} {
		if err := f(); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s of a deleted group: got %v, want os.ErrNotExist", verb, err)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, b := range []budget.Budget{{Memory: 64 << 20}, {Tasks: 10}, {Etcd: 1 << 20}, {Disk: 300 << 20}} {
		b = b.WithDefaults()
		if err := b.Validate(); err == nil {
			t.Errorf("%+v: want an error", b)
		}
	}
	if err := budget.Default.Validate(); err != nil {
		t.Error(err)
	}
}

// A capped cell gets no more CPU than its cap, however much it asks for.
func TestCPUCap(t *testing.T) {
	g := makeCell(t, budget.Default)
	if err := g.SetCPU(200); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BUDGET_CHILD=spin", "BUDGET_PROCS="+strings.Join(g.Procs(budget.LeafCluster), ","))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	time.Sleep(100 * time.Millisecond) // it has joined and spins
	before, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	after, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	// 3 s at a fifth of a core is 0.6 s; a spinning process uncapped
	// takes all of a core it is given.
	if used := after.CPU - before.CPU; used > 900*time.Millisecond {
		t.Errorf("a cell capped at 200m used %s of CPU in 3 s", used)
	}
}
