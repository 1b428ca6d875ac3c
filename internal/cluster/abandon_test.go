package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// createEnv, set in the environment of this test binary run as a child,
// makes TestCreateChild create a cluster: "name bindir datadir".
const createEnv = "OPLAB_TEST_CREATE_CHILD"

// TestCreateChild is the child process of TestAbandonedCreate: it creates
// a cluster and prints each step as it starts, to be killed part-way.
func TestCreateChild(t *testing.T) {
	spec := strings.Fields(os.Getenv(createEnv))
	if len(spec) != 3 {
		t.Skip("the child of TestAbandonedCreate")
	}
	p, err := cluster.NewProvider(cluster.ProviderWithEmbedded(spec[1], spec[2]))
	if err != nil {
		t.Fatal(err)
	}
	err = p.Create(context.Background(), spec[0], cluster.CreateWithProgress(func(s cluster.Step) {
		if !s.Done {
			fmt.Println("step:", s.Name)
		}
	}))
	t.Fatalf("create returned (%v): it was to be killed", err)
}

// TestAbandonedCreate kills a process creating a cluster with SIGKILL at
// several steps: the cluster reads as abandoned (not creating), List
// removes it with its processes and directory, and a cluster of the same
// name can be made again.
func TestAbandonedCreate(t *testing.T) {
	bin := clustertest.BinDir(t)
	p, data := clustertest.NewProvider(t)
	for _, at := range []string{"Starting etcd", "Starting kube-apiserver", "Creating the node"} {
		t.Run(at, func(t *testing.T) {
			name := clustertest.UniqueName("k")
			killCreateAt(t, name, bin, data, at)
			ctx := t.Context()
			// A child the creator was starting may hold the creation lock
			// until it has exec'd (the lock's descriptor closes then): on
			// a loaded machine that can be a moment after the kill.
			var st cluster.Status
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				var err error
				if st, err = p.Status(ctx, name); err != nil {
					t.Fatalf("status after the kill: %v", err)
				}
				if st.State == cluster.StateAbandoned || time.Now().After(deadline) {
					break
				}
			}
			if st.State != cluster.StateAbandoned {
				t.Errorf("state after the kill: got %s, want %s", st.State, cluster.StateAbandoned)
			}
			list, err := p.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range list {
				if s.Name == name {
					t.Errorf("list after the kill: got %s %s, want it removed", s.Name, s.State)
				}
			}
			dir := filepath.Join(data, "clusters", name)
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("directory %s after list: %v, want it removed", dir, err)
			}
			if pids := markedProcesses(dir); len(pids) > 0 {
				t.Errorf("processes of the abandoned cluster after list: %v, want none", pids)
			}
		})
	}
	t.Run("the same name again", func(t *testing.T) {
		name := clustertest.UniqueName("k")
		killCreateAt(t, name, bin, data, "Starting kube-apiserver")
		clustertest.Create(t, p, data, name) // fails the test if Create fails
	})
}

// killCreateAt runs TestCreateChild for cluster name and kills it with
// SIGKILL once it starts step at.
func killCreateAt(t *testing.T, name, bin, data, at string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCreateChild$", "-test.v")
	cmd.Env = append(os.Environ(), createEnv+"="+name+" "+bin+" "+data)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen bytes.Buffer
	sc := bufio.NewScanner(out)
	found := false
	for !found && sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		found = strings.Contains(sc.Text(), "step: "+at)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if !found {
		t.Fatalf("the creating process never started %q:\n%s", at, seen.String())
	}
	// The kill leaves the cluster's processes running; give the last one
	// started a moment to exist.
	time.Sleep(100 * time.Millisecond)
}

// markedProcesses lists the live processes carrying dir as their cluster.
func markedProcesses(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	want := []byte("OPLAB_CLUSTER_DIR=" + dir + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err == nil && bytes.Contains(env, want) && !bytes.Contains(stat, []byte(") Z ")) {
			out = append(out, pid)
		}
	}
	return out
}
