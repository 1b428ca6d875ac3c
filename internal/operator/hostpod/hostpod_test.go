package hostpod

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
)

func pod(name string, phase corev1.PodPhase, created time.Time, deleting bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{"app": "op"}, CreationTimestamp: metav1.NewTime(created)},
		Status:     corev1.PodStatus{Phase: phase},
	}
	if deleting {
		now := metav1.Now()
		p.DeletionTimestamp = &now
	}
	return p
}

func TestRunningPod(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		pods []*corev1.Pod
		want string
	}{
		{"none", nil, ""},
		{"pending only", []*corev1.Pod{pod("a", corev1.PodPending, t0, false)}, ""},
		{"running", []*corev1.Pod{pod("a", corev1.PodRunning, t0, false)}, "a"},
		{"terminating is not played", []*corev1.Pod{pod("a", corev1.PodRunning, t0, true)}, ""},
		{"newest running wins", []*corev1.Pod{
			pod("old", corev1.PodRunning, t0, false),
			pod("new", corev1.PodRunning, t0.Add(time.Second), false),
			pod("newer-pending", corev1.PodPending, t0.Add(2*time.Second), false),
		}, "new"},
	}
	for _, tt := range tests {
		if got := runningPod(tt.pods); got != tt.want {
			t.Errorf("%s: runningPod = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// harness runs Run against a fake API (the pods' semantics here are only
// list and watch) with a shell script as the program.
type harness struct {
	t       *testing.T
	cs      *fake.Clientset
	log     string
	prev    string
	stopped chan error
}

func start(t *testing.T, script string) *harness {
	t.Helper()
	dir := t.TempDir()
	h := &harness{t: t, cs: fake.NewClientset(), log: filepath.Join(dir, "pod.log"), prev: filepath.Join(dir, "pod.previous.log"), stopped: make(chan error, 1)}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		h.stopped <- Run(ctx, Options{
			Client: h.cs, Namespace: "ns", Selector: "app=op",
			Argv: []string{"/bin/sh", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"},
			LogPath: h.log, PreviousLogPath: h.prev, StopGrace: 5 * time.Second,
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-h.stopped:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("Run did not return after its context ended")
		}
	})
	return h
}

func (h *harness) create(p *corev1.Pod) {
	h.t.Helper()
	if _, err := h.cs.CoreV1().Pods("ns").Create(h.t.Context(), p, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// delete deletes pod name as the API server does with a grace period: it
// is marked first (the fake clientset would delete it at once), then
// deleted when the grace is over, as the kubelet does.
func (h *harness) delete(name string) {
	h.t.Helper()
	p, err := h.cs.CoreV1().Pods("ns").Get(h.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	now, grace := metav1.Now(), int64(30)
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &grace
	if _, err := h.cs.CoreV1().Pods("ns").Update(h.t.Context(), p, metav1.UpdateOptions{}); err != nil {
		h.t.Fatal(err)
	}
	h.forceDelete(name)
}

// forceDelete deletes pod name at once, as kubectl delete --force
// --grace-period=0 does: it is gone with no deletion seen before.
func (h *harness) forceDelete(name string) {
	h.t.Helper()
	if err := h.cs.CoreV1().Pods("ns").Delete(h.t.Context(), name, metav1.DeleteOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// waitFile waits until the file holds want (or, with absent, no longer does).
func (h *harness) waitFile(path, want string, present bool) {
	h.t.Helper()
	err := wait.PollUntilContextTimeout(h.t.Context(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), want) == present, nil
	})
	if err != nil {
		b, _ := os.ReadFile(path)
		h.t.Fatalf("%s: contains %q = %v never came; it holds:\n%s", filepath.Base(path), want, present, b)
	}
}

const serve = `echo "started pod=$POD_NAME"; trap 'echo "stopping pod=$POD_NAME"; exit 0' TERM; while :; do sleep 0.05; done`

func TestRunFollowsThePod(t *testing.T) {
	t.Parallel()
	h := start(t, serve)
	now := time.Now()
	// Nothing runs until a pod runs.
	h.create(pod("op-1", corev1.PodPending, now, false))
	time.Sleep(300 * time.Millisecond)
	if _, err := os.Stat(h.log); err == nil {
		t.Fatal("the program started for a Pending pod")
	}
	running := pod("op-1", corev1.PodRunning, now, false)
	if _, err := h.cs.CoreV1().Pods("ns").UpdateStatus(t.Context(), running, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.waitFile(h.log, "stdout F started pod=op-1", true)

	// The pod is replaced: the program is stopped and started anew for
	// the new pod, with the last run's log kept as the previous one.
	h.delete("op-1")
	h.waitFile(h.log, "stdout F stopping pod=op-1", true)
	h.create(pod("op-2", corev1.PodRunning, now.Add(time.Second), false))
	h.waitFile(h.log, "stdout F started pod=op-2", true)
	h.waitFile(h.prev, "started pod=op-1", true)
	h.waitFile(h.log, "op-1", false)
}

func TestRunRestartsAnExitedProgram(t *testing.T) {
	t.Parallel()
	h := start(t, `echo "run $$"; echo oops >&2; exit 3`)
	h.create(pod("op-1", corev1.PodRunning, time.Now(), false))
	h.waitFile(h.log, "stderr F oops", true)
	h.waitFile(h.log, "stderr F hostpod: /bin/sh exited: exit status 3", true)
	first, _ := os.ReadFile(h.log)
	// Restarted after the first backoff (1 s), as a kubelet restarts a
	// container; the first run's log becomes the previous one.
	h.waitFile(h.prev, string(first[:strings.Index(string(first), "\n")]), true)
	h.waitFile(h.log, "stdout F run", true)
}

func TestRunKillsForAPodDeletedAtOnce(t *testing.T) {
	t.Parallel()
	h := start(t, serve)
	now := time.Now()
	h.create(pod("op-1", corev1.PodRunning, now, false))
	h.waitFile(h.log, "stdout F started pod=op-1", true)
	// Deleted with no grace period, the program is killed, as a crash
	// ends it: no SIGTERM it could finish its work on.
	h.forceDelete("op-1")
	h.create(pod("op-2", corev1.PodRunning, now.Add(time.Second), false))
	h.waitFile(h.log, "stdout F started pod=op-2", true)
	h.waitFile(h.prev, "stderr F hostpod: /bin/sh exited: signal: killed", true)
	if b, _ := os.ReadFile(h.prev); strings.Contains(string(b), "stopping") {
		t.Errorf("the program of a pod deleted at once was asked to stop, not killed:\n%s", b)
	}
}
