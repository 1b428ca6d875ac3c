package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestClustersOutliveOplab creates a cluster with an oplab process that then
// exits, as after a crash or restart: a later oplab finds it running
// (re-adopts it), reports it stopped once its processes are gone, and
// cleans it up.
func TestClustersOutliveOplab(t *testing.T) {
	bin := clustertest.BinDir(t)
	data := t.TempDir()
	oplab := filepath.Join(t.TempDir(), "oplab")
	if out, err := exec.Command("go", "build", "-o", oplab, "oplab.dev/oplab/cmd/oplab").CombinedOutput(); err != nil {
		t.Fatalf("build oplab: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	create := exec.CommandContext(ctx, oplab, "cluster", "create", "survivor", "--data-dir", data, "--bin-dir", bin)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("oplab cluster create: %v\n%s", err, out)
	}
	// The creating process has exited; this test process is a later oplab.
	p, err := cluster.NewProvider(cluster.ProviderWithEmbedded(bin, data))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Delete(context.Background(), "survivor") })
	s, err := p.Status(ctx, "survivor")
	if err != nil || s.State != cluster.StateRunning {
		t.Fatalf("cluster after its creator exited: got %v %v, want running", s.State, err)
	}

	// Everything dies (a machine restart): the cluster is listed as
	// stopped, and delete cleans it up.
	for _, c := range s.Components {
		// Components sharing a process share its PID: a second kill may
		// find it gone.
		if err := syscall.Kill(c.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("kill %s: %v", c.Name, err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, err = p.Status(ctx, "survivor")
		if err != nil {
			t.Fatal(err)
		}
		if s.State == cluster.StateStopped || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s.State != cluster.StateStopped {
		t.Fatalf("cluster with every process killed: got %s, want stopped", s.State)
	}
	out, err := exec.CommandContext(ctx, oplab, "cluster", "list", "--data-dir", data, "--bin-dir", bin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "stopped") || !strings.Contains(string(out), "kube-apiserver dead") {
		t.Errorf("list of a dead cluster: %v\n%s", err, out)
	}
	out, err = exec.CommandContext(ctx, oplab, "cluster", "delete", "survivor", "--data-dir", data, "--bin-dir", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("delete a dead cluster: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(data, "clusters", "survivor")); !os.IsNotExist(err) {
		t.Errorf("directory of the deleted dead cluster: %v", err)
	}
}
