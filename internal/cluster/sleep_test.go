package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/budget"
	cellpkg "oplab.dev/oplab/internal/cell"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// heartbeatEnv makes this test binary, started as a cluster's host
// process, write the time to the file it names every 50 ms (see init).
const heartbeatEnv = "OPLAB_TEST_HEARTBEAT"

func init() {
	path := os.Getenv(heartbeatEnv)
	if path == "" {
		return
	}
	for {
		// Written aside and renamed over the beat, so that a reader never
		// finds it truncated and not yet written: the process may be
		// stopped, or frozen, between the two.
		next := path + ".next"
		err := os.WriteFile(next, []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o644)
		if err == nil {
			err = os.Rename(next, path)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSleep freezes a cluster in a cell, thaws it, stops it frozen and
// starts it again from its directory, as a session nobody uses is put to
// sleep and woken: frozen, no process of the cluster runs (its host
// process's heartbeat stands still, the group's CPU time does not grow,
// the API server does not answer); thawed, all of it goes on with the
// learner's objects; stopped while frozen, it stops (a frozen process
// takes no signal until it thaws); started again, its host process runs
// again as it was started, and its pods run at once. The node lifecycle
// controller, which would take a thawed node's old lease for a dead node,
// does not run, and pods still schedule without it.
func TestSleep(t *testing.T) {
	p, data := budgetProvider(t, budget.Default)
	if !p.Info().Capabilities.Sleeps {
		t.Fatal("an embedded provider with budgets does not declare that its clusters sleep")
	}
	c := clustertest.Create(t, p, data, clustertest.UniqueName("sleep"))
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	dir := filepath.Join(data, "clusters", c.Name)
	if _, err := c.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before-sleep"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prog, err := p.HostProgram(ctx, c.Name, exe)
	if err != nil {
		t.Fatal(err)
	}
	// The cell writes only its own /tmp (cell.TmpDir on the host).
	beat := filepath.Join(cellpkg.TmpDir(dir), "heartbeat")
	if err := p.StartHostProcess(ctx, c.Name, cluster.HostProcess{Name: "heartbeat", Path: prog, Env: []string{heartbeatEnv + "=/tmp/heartbeat"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(dir, "*", "heartbeat.log"))
			var log []byte
			for _, l := range logs {
				log, _ = os.ReadFile(l)
			}
			t.Logf("the host process's log:\n%s", log)
		}
	})
	beating(t, beat, "the host process, started")

	if err := p.Freeze(ctx, c.Name); err != nil {
		t.Fatal(err)
	}
	u0, err := p.Usage(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	b0 := readBeat(t, beat)
	time.Sleep(time.Second)
	u1, err := p.Usage(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	if b1 := readBeat(t, beat); b1 != b0 {
		t.Errorf("frozen: the host process wrote its heartbeat (%d, then %d)", b0, b1)
	}
	if u1.CPU != u0.CPU {
		t.Errorf("frozen: the cell used %s of CPU in a second, want none", u1.CPU-u0.CPU)
	}
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	_, err = c.Client.CoreV1().ConfigMaps("default").Get(short, "before-sleep", metav1.GetOptions{})
	cancelShort()
	if err == nil {
		t.Error("frozen: the API server answered")
	}

	if err := p.Thaw(ctx, c.Name); err != nil {
		t.Fatal(err)
	}
	beating(t, beat, "thawed")
	if _, err := c.Client.CoreV1().ConfigMaps("default").Get(ctx, "before-sleep", metav1.GetOptions{}); err != nil {
		t.Fatalf("thawed: %v", err)
	}
	if err := p.Thaw(ctx, c.Name); err != nil {
		t.Errorf("a second Thaw: %v, want nothing to do", err)
	}
	// The controller manager logs what it leaves out as it starts its
	// controllers, which on a loaded machine may come after the cluster
	// is ready and this far.
	deadline := time.Now().Add(time.Minute)
	for !disabled(t, dir, "node-lifecycle-controller") && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if !disabled(t, dir, "node-lifecycle-controller") || disabled(t, dir, "garbage-collector-controller") {
		t.Error("the controller manager runs the node lifecycle controller, or not the garbage collector: want only the garbage collector")
	}
	// Without that controller nothing would take a new node's not-ready
	// taint off: the node has none, and a pod made after the thaw runs.
	node, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range node.Items {
		if len(n.Spec.Taints) > 0 {
			t.Errorf("node %s is tainted %v, want no taint", n.Name, n.Spec.Taints)
		}
	}
	podRuns(t, ctx, c, "after-thaw", "thawed")

	// Asleep for longer: frozen, then stopped.
	if err := p.Freeze(ctx, c.Name); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	if err := p.Stop(ctx, c.Name); err != nil {
		t.Fatal(err)
	}
	t.Logf("a frozen cluster stopped in %s", time.Since(stopped).Round(time.Millisecond))
	if st, err := p.Status(ctx, c.Name); err != nil || st.State != cluster.StateStopped {
		t.Fatalf("after Stop: state %s (%v), want stopped", st.State, err)
	}
	if err := os.Remove(beat); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := p.Start(ctx, c.Name); err != nil {
		t.Fatal(err)
	}
	t.Logf("started again from its directory in %s", time.Since(started).Round(time.Millisecond))
	beating(t, beat, "started again")
	if _, err := c.Client.CoreV1().ConfigMaps("default").Get(ctx, "before-sleep", metav1.GetOptions{}); err != nil {
		t.Fatalf("started again: %v", err)
	}
	// KWOK, a new process with a new name, plays the node's kubelet at
	// once, not only once its predecessor's lease (two minutes) expired.
	podRuns(t, ctx, c, "after-start", "started again")
	// The host process is the cluster's again: a Stop stops it.
	if err := p.StopHostProcess(ctx, c.Name, "heartbeat"); err != nil {
		t.Fatal(err)
	}
	b := readBeat(t, beat)
	time.Sleep(300 * time.Millisecond)
	if readBeat(t, beat) != b {
		t.Error("the host process started again by Start still runs after StopHostProcess")
	}
}

// podRuns makes a pod named name and fails the test, saying when, unless
// it is scheduled and running within 30 s.
func podRuns(t *testing.T, ctx context.Context, c *clustertest.Cluster, name, when string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	for deadline := began.Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got, err := c.Client.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil && got.Spec.NodeName != "" && got.Status.Phase == corev1.PodRunning {
			t.Logf("%s: a new pod ran after %s", when, time.Since(began).Round(time.Millisecond))
			return
		}
	}
	t.Errorf("%s: a new pod was not scheduled and running within 30 s", when)
}

// beating waits until the heartbeat file changes, and fails the test when
// it does not within 10 s.
func beating(t *testing.T, path, when string) {
	t.Helper()
	first, _ := os.ReadFile(path)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if now, err := os.ReadFile(path); err == nil && len(now) > 0 && string(now) != string(first) {
			return
		}
	}
	t.Fatalf("%s: the host process's heartbeat did not move in 10 s", when)
}

func readBeat(t *testing.T, path string) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		t.Fatalf("heartbeat %q: %v", data, err)
	}
	return n
}

// disabled says whether the controller manager of the cluster in dir
// logged that it does not run controller.
func disabled(t *testing.T, dir, controller string) bool {
	t.Helper()
	log, err := os.ReadFile(filepath.Join(dir, "logs", "kube-controlplane.log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(log), `"Warning: controller is disabled" controller="`+controller+`"`)
}
