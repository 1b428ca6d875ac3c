package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/store"
)

// oplabCLI runs the oplab binary as a learner's terminal would: each
// command a process of its own, on one data directory.
type oplabCLI struct {
	t        *testing.T
	exe, bin string
	data     string
}

// newOplabCLI runs oplab as built by labBinDir, on a data directory of
// the test's.
func newOplabCLI(t *testing.T) *oplabCLI {
	t.Helper()
	dir := labBinDir(t)
	c := &oplabCLI{t: t, exe: filepath.Join(dir, "oplab"), bin: dir, data: t.TempDir()}
	t.Cleanup(func() {
		c.run("lab", "stop")
		c.run("cluster", "delete", "--all")
	})
	return c
}

// labBinDir builds oplab, pg-operator and hostpod from this tree into a
// bin directory beside the control plane of clustertest.BinDir.
func labBinDir(t *testing.T) string {
	t.Helper()
	src := clustertest.BinDir(t)
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"oplab", "pg-operator", "hostpod"} {
		_ = os.Remove(filepath.Join(dir, name))
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), "oplab.dev/oplab/cmd/"+name).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, out)
		}
	}
	return dir
}

func (c *oplabCLI) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.exe, append(args, "--data-dir", c.data, "--bin-dir", c.bin)...)
	cmd.Env = append(os.Environ(), "OPLAB_DATA="+c.data)
	return cmd
}

func (c *oplabCLI) run(args ...string) (string, error) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := c.command(ctx, args...).CombinedOutput()
	return string(out), err
}

func (c *oplabCLI) must(args ...string) string {
	c.t.Helper()
	out, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("oplab %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (c *oplabCLI) status() Status {
	c.t.Helper()
	out := c.must("lab", "status", "-o", "json")
	var st Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		c.t.Fatalf("lab status -o json: %v\n%s", err, out)
	}
	return st
}

// killAt runs oplab with args and kills it with SIGKILL once its output
// has a line containing at, or once until returns true. It returns the
// output up to then.
func (c *oplabCLI) killAt(at string, until func() bool, args ...string) string {
	c.t.Helper()
	cmd := c.command(context.Background(), args...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	var out bytes.Buffer
	seen, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		sc := bufio.NewScanner(pr)
		closed := false
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if at != "" && !closed && strings.Contains(sc.Text(), at) {
				close(seen)
				closed = true
			}
		}
		if !closed {
			close(seen)
		}
	}()
	deadline := time.After(3 * time.Minute)
	for wait := true; wait; {
		select {
		case <-seen:
			wait = false
		case <-deadline:
			wait = false
		case <-time.After(10 * time.Millisecond):
			wait = until == nil || !until()
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	err := cmd.Wait()
	pw.Close()
	<-finished // out is complete and no longer written
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		c.t.Fatalf("oplab %s ended (%v) before it could be killed at %q:\n%s", strings.Join(args, " "), err, at, out.String())
	}
	if at != "" && !strings.Contains(out.String(), at) {
		c.t.Fatalf("oplab %s never printed %q:\n%s", strings.Join(args, " "), at, out.String())
	}
	return out.String()
}

// leftovers lists the cluster directories and the live processes of the
// data directory's clusters.
func (c *oplabCLI) leftovers() (dirs []string, pids []string) {
	entries, _ := os.ReadDir(filepath.Join(c.data, "clusters"))
	for _, e := range entries {
		dirs = append(dirs, e.Name())
	}
	procs, _ := os.ReadDir("/proc")
	marker := []byte("OPLAB_CLUSTER_DIR=" + filepath.Join(c.data, "clusters") + "/")
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", p.Name(), "environ"))
		stat, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if err == nil && bytes.Contains(env, marker) && !bytes.Contains(stat, []byte(") Z ")) {
			pids = append(pids, p.Name())
		}
	}
	return dirs, pids
}

// pending reads the intent the store holds for session id.
func (c *oplabCLI) pending(id string) *Pending {
	c.t.Helper()
	st, err := store.OpenDir(c.t.Context(), c.data)
	if err != nil {
		c.t.Fatal(err)
	}
	defer st.Close()
	rec, err := st.Session(c.t.Context(), id)
	if err != nil {
		c.t.Fatal(err)
	}
	return pendingOf(rec.Data)
}

// TestKilledStart kills `oplab lab start` with SIGKILL at four points —
// while etcd starts, while the API server starts, while the operator is
// installed, and during the lab's setup — and checks each time that the
// next command finds the session failed with the reason, that no process
// or directory of its cluster is left, and that a start is not refused.
// Then a start runs to the end, and a chaos, a reset and a stop are each
// killed half-way: the next command rolls back or finishes them.
func TestKilledStart(t *testing.T) {
	c := newOplabCLI(t)
	defer func() { c.t = t }() // the clean-up runs as this test, after the subtests
	for _, at := range []string{"• Starting etcd", "• Starting kube-apiserver", "• install the operator", "• wait until prod-db is Ready=True"} {
		t.Run(strings.TrimPrefix(at, "• "), func(t *testing.T) {
			c.t = t
			c.killAt(at, nil, "lab", "start", "failover")
			st := c.status()
			if st.State != Failed || !strings.Contains(st.Error, "stopped while starting the session") || st.ClusterLive {
				t.Errorf("after the kill: got %s, error %q, cluster live %v; want failed, saying the start was killed, no cluster", st.State, st.Error, st.ClusterLive)
			}
			if dirs, pids := c.leftovers(); len(dirs) > 0 || len(pids) > 0 {
				t.Errorf("left over: directories %v, processes %v; want none", dirs, pids)
			}
			if out := c.must("cluster", "list"); !strings.Contains(out, "No clusters") {
				t.Errorf("cluster list after the kill:\n%s", out)
			}
		})
	}
	c.t = t
	out := c.must("lab", "start", "failover")
	st := c.status()
	if st.State != Ready || !st.ClusterLive {
		t.Fatalf("the start after the kills: got %s, want ready\n%s", st.State, out)
	}

	t.Run("chaos", func(t *testing.T) {
		c.t = t
		c.killAt("• delete the primary's pod", nil, "lab", "chaos")
		if p := c.pending(st.ID); p == nil || p.Op != OpChaos {
			t.Fatalf("pending after the killed chaos: got %+v, want chaos", p)
		}
		if got := c.status(); !strings.Contains(got.Notice, "chaos was interrupted") {
			t.Errorf("status after the killed chaos: notice %q, want it to say the chaos was interrupted", got.Notice)
		}
		out := c.must("lab", "chaos")
		if !strings.Contains(out, "the chaos was rolled back") || !strings.Contains(out, "Fault confirmed at") {
			t.Errorf("the next chaos: want the rollback, then the chaos:\n%s", out)
		}
		if got := c.status(); got.State != InExercise || got.Attempt == nil || got.Attempt.T0.IsZero() {
			t.Errorf("after the next chaos: got %s %+v, want in-exercise with T0", got.State, got.Attempt)
		}
	})

	t.Run("reset", func(t *testing.T) {
		c.t = t
		c.killAt("• wait for the steady state", nil, "lab", "reset")
		if p := c.pending(st.ID); p == nil || p.Op != OpReset {
			t.Fatalf("pending after the killed reset: got %+v, want reset", p)
		}
		out, _ := c.run("lab", "check")
		if !strings.Contains(out, "the reset was finished") {
			t.Errorf("the next command: want it to finish the reset:\n%s", out)
		}
		if got := c.status(); got.State != Ready || got.Attempt != nil || !strings.Contains(got.Notice, "the reset was finished") {
			t.Errorf("after the finished reset: got %s, attempt %+v, notice %q; want ready, none, the notice", got.State, got.Attempt, got.Notice)
		}
	})

	t.Run("stop", func(t *testing.T) {
		c.t = t
		// The API server, stopped with SIGSTOP, holds the stop up in its
		// grace period, where it is killed.
		var cp int
		for _, pid := range pidsOf(t, c, "kube-controlplane") {
			cp = pid
		}
		if cp == 0 {
			t.Fatal("no kube-controlplane process")
		}
		if err := syscall.Kill(cp, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		defer syscall.Kill(cp, syscall.SIGCONT)
		started := time.Now()
		c.killAt("", func() bool { return time.Since(started) > 5*time.Second && len(pidsOf(t, c, "hostpod")) == 0 }, "lab", "stop")
		if p := c.pending(st.ID); p == nil || p.Op != OpStop {
			t.Fatalf("pending after the killed stop: got %+v, want stop", p)
		}
		_ = syscall.Kill(cp, syscall.SIGCONT)
		got := c.status()
		if got.State != Expired || !strings.Contains(got.Notice, "stopped while ending the session") {
			t.Errorf("status after the killed stop: got %s, notice %q; want expired, saying the stop was finished", got.State, got.Notice)
		}
		if dirs, pids := c.leftovers(); len(dirs) > 0 || len(pids) > 0 {
			t.Errorf("left over: directories %v, processes %v; want none", dirs, pids)
		}
	})
}

// pidsOf lists the processes of the data directory's clusters whose
// command is name.
func pidsOf(t *testing.T, c *oplabCLI, name string) []int {
	_, pids := c.leftovers()
	var out []int
	for _, p := range pids {
		comm, _ := os.ReadFile(filepath.Join("/proc", p, "comm"))
		if strings.TrimSpace(string(comm)) == name[:min(len(name), 15)] { // the kernel keeps 15 bytes
			pid, _ := strconv.Atoi(p)
			out = append(out, pid)
		}
	}
	return out
}
