package session

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/store"
	"oplab.dev/oplab/internal/walltest"
)

// A learner whose cluster runs out of its memory sees why in the session's
// status, may reset whatever step the exercise is at, and the reset gives
// them a working cluster again: made anew, with the lab set up.
func TestOverBudgetResetMakesTheClusterAnew(t *testing.T) {
	bin := clustertest.BinDir(t)
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := cluster.NewProvider(cluster.ProviderWithBudget(budget.Budget{Memory: 768 << 20, Etcd: 1 << 30, Disk: 3 << 30}), cluster.ProviderWithEmbedded(bin, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	walltest.Require(t, walltest.Budget, walltest.Contained(p.Contained()))
	m, err := New(Options{Store: st, Provider: p, Course: shippedCourse(t), BinDir: bin, LockDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Start(ctx, StartOptions{Learner: "alice", Lab: "failover"}, nil)
	if s != nil {
		defer m.Stop(context.WithoutCancel(ctx), s.ID, "", nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	if s.Budget == nil || s.Budget.Trouble != nil || s.Budget.MemoryLimit != 768<<20 {
		t.Fatalf("a new session's budget: %+v", s.Budget)
	}
	// The lab's setup ran uncapped; the started session is held to its
	// share of the CPU.
	if s.Budget.CPULimit != budget.DefaultCPU {
		t.Errorf("a started session's CPU cap is %dm, want the budget's %dm", s.Budget.CPULimit, budget.DefaultCPU)
	}
	// A build runs uncapped while the Manager's one burst is free, and
	// the cell is capped again after it.
	capOf := func() int64 {
		t.Helper()
		u, err := p.Usage(ctx, s.Cluster)
		if err != nil {
			t.Fatal(err)
		}
		return u.CPULimit
	}
	rec, err := m.record(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	release := m.burst(ctx, &rec)
	if release == nil {
		t.Fatal("no burst for a build with the Manager's one free")
	}
	if got := capOf(); got != 0 {
		t.Errorf("a bursting build's cell is capped at %dm, want no cap", got)
	}
	if m.burst(ctx, &rec) != nil {
		t.Error("a second burst while the Manager's one is taken")
	}
	release()
	if got := capOf(); got != budget.DefaultCPU {
		t.Errorf("after a burst the cell's CPU cap is %dm, want the budget's %dm", got, budget.DefaultCPU)
	}
	if again := m.burst(ctx, &rec); again == nil {
		t.Error("no burst once the one taken was given back")
	} else {
		again()
	}
	if slices.Contains(s.Actions, ActReset) {
		t.Fatalf("a ready session with nothing to reset offers reset: %v", s.Actions)
	}
	old := s.Cluster
	cfg, err := p.RESTConfig(s.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := clustertest.Flood(fctx, cfg, func() bool {
		st, err := m.Status(ctx, s.ID)
		return err == nil && st.Budget != nil && st.Budget.Trouble != nil
	}); err != nil {
		t.Fatal(err)
	}
	// The flood has stopped and its garbage may be collected: a cell seen
	// full stays so for a while (fullHold), so the trouble and its Reset
	// are still there.
	s, err = m.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	tr := s.Budget.Trouble
	if tr == nil {
		t.Fatalf("the trouble is gone once the flood stopped: %+v", s.Budget)
	}
	t.Logf("trouble: %+v", tr)
	if (tr.Kind != TroubleMemory && tr.Kind != TroubleMemoryFull) || !strings.Contains(tr.Message, "768 MiB") || !strings.Contains(tr.Message, "eset the exercise") {
		t.Errorf("the trouble says %+v; want the memory bound, its size and what to do", tr)
	}
	if !slices.Contains(s.Actions, ActReset) {
		t.Fatalf("a session over its budget does not offer reset: %v", s.Actions)
	}
	s, err = m.Reset(ctx, s.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.State != Ready || s.Budget == nil || s.Budget.Trouble != nil || s.Budget.OOMKills != 0 {
		t.Fatalf("after the reset: state %s, budget %+v", s.State, s.Budget)
	}
	if s.Cluster != old {
		t.Errorf("the session's cluster is now %q, want the same name %q", s.Cluster, old)
	}
	if s.Budget.CPULimit != budget.DefaultCPU {
		t.Errorf("the cluster made anew has a CPU cap of %dm, want the budget's %dm", s.Budget.CPULimit, budget.DefaultCPU)
	}
	cfg, err = p.RESTConfig(s.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("the new cluster does not answer: %v", err)
	}
	for _, pod := range pods.Items {
		if strings.HasPrefix(pod.Name, "flood-") {
			t.Fatalf("the learner's pods are still there after the cluster was made anew: %s", pod.Name)
		}
	}
	// The lab is set up again: its first exercise can begin.
	if !slices.Contains(s.Actions, ActChaos) {
		t.Errorf("after the reset the exercise cannot begin: %v", s.Actions)
	}
	evs, err := m.Timeline(ctx, s.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range evs.Events {
		found = found || ev.Kind == KindReset && strings.Contains(ev.Message, "on a new cluster")
	}
	if !found {
		t.Error("the timeline does not say the exercise was reset on a new cluster")
	}
}

// TestTroubleOrder reads usages as a cell passes through its bounds: a
// kill outranks a full memory, and a full memory is resident memory, not
// page cache, which the kernel gives back.
func TestTroubleOrder(t *testing.T) {
	const mi = 1 << 20
	for _, c := range []struct {
		name string
		u    cluster.Usage
		want string
	}{
		{"idle", cluster.Usage{Memory: 300 * mi, Resident: 250 * mi, MemoryLimit: 768 * mi}, ""},
		{"cache fills the rest", cluster.Usage{Memory: 768 * mi, Resident: 600 * mi, MemoryLimit: 768 * mi}, ""},
		{"resident fills it", cluster.Usage{Memory: 768 * mi, Resident: 712 * mi, MemoryLimit: 768 * mi}, TroubleMemoryFull},
		{"killed", cluster.Usage{Memory: 21 * mi, Resident: 10 * mi, MemoryLimit: 768 * mi, OOMKills: 1}, TroubleMemory},
		{"killed while full", cluster.Usage{Memory: 768 * mi, Resident: 760 * mi, MemoryLimit: 768 * mi, OOMKills: 1}, TroubleMemory},
		{"a process gone", cluster.Usage{MemoryLimit: 768 * mi, Down: []string{"etcd"}}, TroubleStopped},
		{"no limit known", cluster.Usage{Memory: 768 * mi, Resident: 760 * mi}, ""},
	} {
		got := ""
		if tr := trouble(c.u); tr != nil {
			got = tr.Kind
			if !strings.Contains(tr.Message, resetHint) {
				t.Errorf("%s: the message does not say how to go on: %q", c.name, tr.Message)
			}
		}
		if got != c.want {
			t.Errorf("%s: trouble %q, want %q", c.name, got, c.want)
		}
	}
}

// TestBudgetJSON reads a troubled budget as the lab page does: its usage
// and its trouble in one object.
func TestBudgetJSON(t *testing.T) {
	b := Budget{Usage: cluster.Usage{Memory: 1 << 20, CPU: jsonconv.Duration(1500 * time.Millisecond)},
		Trouble: &Trouble{Kind: TroubleMemoryFull, Message: "full"}}
	data, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	tr, _ := got["trouble"].(map[string]any)
	if tr["kind"] != TroubleMemoryFull || got["memory"] != float64(1<<20) || got["cpuMs"] != float64(1500) {
		t.Errorf("a troubled budget is written %s", data)
	}
	if data, _ := json.Marshal(Budget{}); strings.Contains(string(data), "trouble") {
		t.Errorf("an untroubled budget is written %s", data)
	}
}

// A cluster seen memory-full stays so for fullHold while nothing worse is
// seen, and forgets it when made anew.
func TestFullHolds(t *testing.T) {
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := New(Options{Store: st, Course: shippedCourse(t)})
	if err != nil {
		t.Fatal(err)
	}
	full := &Trouble{Kind: TroubleMemoryFull}
	killed := &Trouble{Kind: TroubleMemory}
	t0 := time.Now()
	if got := m.holdFull("a", full, t0); got != full {
		t.Fatalf("full now: %+v", got)
	}
	if got := m.holdFull("a", nil, t0.Add(fullHold-time.Second)); got != full {
		t.Errorf("a second before the hold ends: %+v, want the full trouble", got)
	}
	if got := m.holdFull("b", nil, t0.Add(time.Second)); got != nil {
		t.Errorf("another session holds a's trouble: %+v", got)
	}
	if got := m.holdFull("a", killed, t0.Add(2*time.Second)); got != killed {
		t.Errorf("a worse trouble seen in the hold: %+v, want it", got)
	}
	if got := m.holdFull("a", nil, t0.Add(fullHold)); got != nil {
		t.Errorf("after the hold: %+v, want none", got)
	}
	m.holdFull("a", full, t0)
	m.forgetFull("a")
	if got := m.holdFull("a", nil, t0.Add(time.Second)); got != nil {
		t.Errorf("a cluster made anew holds its old trouble: %+v", got)
	}
	if len(m.full) != 0 {
		t.Errorf("%d holds left, want none", len(m.full))
	}
}
