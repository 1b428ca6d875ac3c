package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/walltest"
)

// budgetProvider returns an embedded provider whose cells have budget b,
// failing where cells with budgets cannot be made (skipping where
// walltest's rule lets a wall go untested).
func budgetProvider(t *testing.T, b budget.Budget) (*cluster.Provider, string) {
	t.Helper()
	clustertest.RequireControlPlane(t)
	data := t.TempDir()
	p, err := cluster.NewProvider(cluster.ProviderWithBudget(b), cluster.ProviderWithEmbedded(clustertest.BinDir(t), data))
	if err != nil {
		t.Fatal(err)
	}
	requireContained(t, p, walltest.Budget)
	return p, data
}

// TestCellBudget checks that a cluster's processes run under its budget and
// that Usage reads it: the ceiling, the task bound and etcd's quota are
// the provider's, every process of the cluster is in the cell's group.
func TestCellBudget(t *testing.T) {
	b := budget.Budget{Memory: 900 << 20, Tasks: 700, Etcd: 96 << 20}.WithDefaults()
	p, data := budgetProvider(t, b)
	c := clustertest.Create(t, p, data, clustertest.UniqueName("budget"))
	ctx := context.Background()
	u, err := p.Usage(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("usage of an idle cluster: %+v", u)
	if u.MemoryLimit != uint64(b.Memory) || u.TasksLimit != uint64(b.Tasks) || u.EtcdQuota != uint64(b.Etcd) || u.DiskLimit != uint64(b.Disk) {
		t.Errorf("limits %+v, want those of %+v", u, b)
	}
	if u.CPULimit != b.CPU {
		t.Errorf("CPU cap %dm once ready, want the budget's %dm", u.CPULimit, b.CPU)
	}
	if u.Memory == 0 || u.Tasks == 0 || u.Etcd == 0 || u.Disk == 0 || u.CPU == 0 {
		t.Errorf("an idle cluster's usage reads zero somewhere: %+v", u)
	}
	if len(u.Down) > 0 || u.OOMKills > 0 {
		t.Errorf("an idle cluster has processes down or killed: %+v", u)
	}
	st, err := p.Status(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	group := p.ConsoleGroup(c.Name)
	if len(group) == 0 {
		t.Fatal("a budgeted cluster has no console group")
	}
	for _, comp := range st.Components {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", comp.PID))
		if err != nil {
			t.Fatal(err)
		}
		// Beside each console leaf is the cluster's leaf, which
		// /proc/PID/cgroup names by its path under its hierarchy.
		for _, f := range group {
			leaf := strings.TrimSuffix(f, "/console/cgroup.procs") + "/cluster"
			found := false
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if parts := strings.SplitN(line, ":", 3); len(parts) == 3 && parts[2] != "/" && strings.HasSuffix(leaf, parts[2]) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s (pid %d) is not in %s:\n%s", comp.Name, comp.PID, leaf, data)
			}
		}
	}
}

// TestSettle checks that a cluster made unsettled runs without its CPU cap
// until Settle caps it at its budget's, that settling again changes
// nothing, and that a restart caps it at once: only the work after a new
// cluster's start (a lab's setup) runs uncapped.
func TestSettle(t *testing.T) {
	b := budget.Default
	p, data := budgetProvider(t, b)
	ctx := context.Background()
	capOf := func(name string) int64 {
		t.Helper()
		u, err := p.Usage(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return u.CPULimit
	}
	settled := clustertest.Create(t, p, data, clustertest.UniqueName("settle"), cluster.CreateUnsettled())
	if got := capOf(settled.Name); got != 0 {
		t.Fatalf("CPU cap %dm of a cluster made unsettled, want none until Settle", got)
	}
	for range 2 {
		if err := p.Settle(ctx, settled.Name); err != nil {
			t.Fatal(err)
		}
		if got := capOf(settled.Name); got != b.CPU {
			t.Fatalf("CPU cap %dm after Settle, want the budget's %dm", got, b.CPU)
		}
	}
	// A burst (a learner's build): uncapped until Settle.
	if lifted, err := p.Unsettle(ctx, settled.Name); err != nil || !lifted {
		t.Fatalf("Unsettle of a settled cluster: lifted %v, %v; want a cap lifted", lifted, err)
	}
	if got := capOf(settled.Name); got != 0 {
		t.Errorf("CPU cap %dm after Unsettle, want none", got)
	}
	if lifted, err := p.Unsettle(ctx, settled.Name); err != nil || lifted {
		t.Errorf("Unsettle of an unsettled cluster: lifted %v, %v; want nothing to lift", lifted, err)
	}
	if err := p.Settle(ctx, settled.Name); err != nil {
		t.Fatal(err)
	}
	if got := capOf(settled.Name); got != b.CPU {
		t.Errorf("CPU cap %dm after Unsettle and Settle, want the budget's %dm", got, b.CPU)
	}
	restarted := clustertest.Create(t, p, data, clustertest.UniqueName("settle"), cluster.CreateUnsettled())
	if err := p.Stop(ctx, restarted.Name); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, restarted.Name); err != nil {
		t.Fatal(err)
	}
	if got := capOf(restarted.Name); got != b.CPU {
		t.Errorf("CPU cap %dm of an unsettled cluster started again, want the budget's %dm", got, b.CPU)
	}
	if err := p.Settle(ctx, "no-such-cluster"); !errors.Is(err, cluster.ErrNotFound) {
		t.Errorf("Settle of a cluster that does not exist: %v, want not found", err)
	}
}

// TestEtcdQuota fills a cluster's etcd past its quota: the writes that do
// not fit are refused with etcd's own error, Usage shows the database at
// its quota, and once the learner deletes what they made Maintain gives
// the space back and writes work again.
func TestEtcdQuota(t *testing.T) {
	b := budget.Budget{Etcd: 64 << 20}.WithDefaults()
	p, data := budgetProvider(t, b)
	c := clustertest.Create(t, p, data, clustertest.UniqueName("quota"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	big := strings.Repeat("x", 1<<20-4096)
	var refused error
	n := 0
	for ; n < 200 && refused == nil; n++ {
		_, refused = c.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("fill-%d", n)}, Data: map[string]string{"x": big},
		}, metav1.CreateOptions{})
	}
	if refused == nil || !strings.Contains(refused.Error(), "database space exceeded") {
		t.Fatalf("after %d ConfigMaps of 1 MiB in a 64 MiB etcd: %v; want etcd's database space exceeded", n, refused)
	}
	t.Logf("refused after %d MiB: %v", n, refused)
	u, err := p.Usage(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	if u.Etcd < u.EtcdQuota*9/10 {
		t.Errorf("etcd's database reads %d bytes, below its quota %d, while it refuses writes", u.Etcd, u.EtcdQuota)
	}
	for i := range n - 1 {
		if err := c.Client.CoreV1().ConfigMaps("default").Delete(ctx, fmt.Sprintf("fill-%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete what was made, under the quota's alarm: %v", err)
		}
	}
	if err := p.Maintain(ctx, c.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a write after the learner deleted what they made and Maintain ran: %v", err)
	}
	if u, _ := p.Usage(ctx, c.Name); u.Etcd >= u.EtcdQuota/2 {
		t.Errorf("etcd's database still takes %d of %d bytes after Maintain", u.Etcd, u.EtcdQuota)
	}
}

// TestOverMemoryBudget makes a learner's cluster hold more than its cell's
// memory: the kernel kills a process of that cell, Usage says so, and a
// neighbour's cluster goes on answering.
func TestOverMemoryBudget(t *testing.T) {
	// etcd's quota is above the ceiling, so that memory binds first.
	b := budget.Budget{Memory: 768 << 20, Etcd: 1 << 30, Disk: 3 << 30}.WithDefaults()
	p, data := budgetProvider(t, b)
	c := clustertest.Create(t, p, data, clustertest.UniqueName("oom"))
	neighbour := clustertest.Create(t, p, data, clustertest.UniqueName("neighbour"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := clustertest.Flood(ctx, c.Config, func() bool {
		u, err := p.Usage(ctx, c.Name)
		return err == nil && (u.OOMKills > 0 || len(u.Down) > 0)
	}); err != nil {
		t.Fatal(err)
	}
	u, err := p.Usage(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("usage after the flood: %+v", u)
	if u.OOMKills == 0 {
		t.Errorf("no OOM kill counted: %+v", u)
	}
	// The kernel lets some charges past the limit: a process it has
	// chosen to kill, or one with a fatal signal pending, is force-charged
	// so that it can exit and free its memory (mm/memcontrol.c, try_charge),
	// as are allocations that may not fail. Measured here up to 164 KiB
	// past it; a ceiling not enforced would let the flood take gigabytes.
	if u.MemoryPeak > uint64(b.Memory)+1<<20 {
		t.Errorf("the cell's memory peaked at %d, over its ceiling %d", u.MemoryPeak, b.Memory)
	}
	if _, err := neighbour.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("the neighbour's cluster does not answer after another cell ran out of memory: %v", err)
	}
	if nu, err := p.Usage(ctx, neighbour.Name); err != nil || nu.OOMKills > 0 || len(nu.Down) > 0 {
		t.Errorf("the neighbour suffered: %+v %v", nu, err)
	}
}
