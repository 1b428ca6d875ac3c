package cluster_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// checkCap follows the CPU cap of a kind cluster made unsettled
// (cluster.CreateUnsettled) through Settle, Unsettle and Maintain, reading
// the quota the kernel holds the node container to from inside the node
// (its cgroup's cpu.max, or cgroup v1's cpu.cfs_quota_us), not only what
// the engine says.
func checkCap(t *testing.T, ctx context.Context, c *clustertest.Cluster) {
	t.Helper()
	node := "oplab-" + c.Name + "-control-plane"
	capped := fmt.Sprintf("%d 100000", budget.Kind.CPU*100) // one core: 100 ms a 100 ms period
	quota := func() string {
		t.Helper()
		// cgroup v2's cpu.max, or v1's quota and period in its format.
		const read = `if [ -f /sys/fs/cgroup/cpu.max ]; then cat /sys/fs/cgroup/cpu.max; else
q=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us); [ "$q" = -1 ] && q=max; echo "$q $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"; fi`
		out, err := exec.CommandContext(ctx, "docker", "exec", node, "sh", "-c", read).CombinedOutput()
		if err != nil {
			t.Fatalf("read the node's CPU quota: %v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// Unsettled: no quota (the engine's default, "max"), and nothing to lift.
	if got := quota(); strings.HasPrefix(got, capped) || !strings.HasPrefix(got, "max") {
		t.Errorf("an unsettled node's cpu.max: got %q, want no quota", got)
	}
	if lifted, err := c.Provider.Unsettle(ctx, c.Name); err != nil || lifted {
		t.Errorf("Unsettle of an unsettled node: got %v, %v; want false, nil", lifted, err)
	}
	for range 2 { // settling a settled node does nothing
		if err := c.Provider.Settle(ctx, c.Name); err != nil {
			t.Fatalf("Settle: %v", err)
		}
		if got := quota(); got != capped {
			t.Errorf("a settled node's cpu.max: got %q, want %q", got, capped)
		}
	}
	// Lifted for a build: a quota of every CPU there is, which bounds
	// nothing; lifted once.
	lifted, err := c.Provider.Unsettle(ctx, c.Name)
	if err != nil || !lifted {
		t.Fatalf("Unsettle of a settled node: got %v, %v; want true, nil", lifted, err)
	}
	ncpu, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.NCPU}}").Output()
	if err != nil {
		t.Fatalf("docker info: %v", err)
	}
	if got, want := quota(), strings.TrimSpace(string(ncpu))+"00000 100000"; got != want {
		t.Errorf("a lifted node's cpu.max: got %q, want %q (every CPU)", got, want)
	}
	if lifted, err := c.Provider.Unsettle(ctx, c.Name); err != nil || lifted {
		t.Errorf("a second Unsettle: got %v, %v; want false, nil", lifted, err)
	}
	// Maintain leaves a node lifted a moment ago alone, and caps one left
	// lifted for longer than a start or a build takes (its settler gone):
	// the mark's time is in the provider's directory of the cluster.
	if err := c.Provider.Maintain(ctx, c.Name); err != nil {
		t.Fatalf("Maintain: %v", err)
	}
	if got := quota(); got == capped {
		t.Errorf("Maintain capped a node lifted a moment ago")
	}
	mark := filepath.Join(c.DataDir, "kind", c.Name, "unsettled")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(mark, old, old); err != nil {
		t.Fatalf("backdate the node's unsettled mark: %v", err)
	}
	if err := c.Provider.Maintain(ctx, c.Name); err != nil {
		t.Fatalf("Maintain: %v", err)
	}
	if got := quota(); got != capped {
		t.Errorf("a node lifted an hour ago, after Maintain: cpu.max %q, want %q", got, capped)
	}
	if _, err := os.Stat(mark); !os.IsNotExist(err) {
		t.Errorf("the unsettled mark after Maintain settled the node: %v, want gone", err)
	}
}
