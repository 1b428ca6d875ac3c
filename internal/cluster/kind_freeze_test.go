package cluster_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestKindDeleteThawsFrozenCgroups reproduces, on purpose, what left 2 of
// 5 kind clusters undeletable on this project's cgroup v1 machine: a pod's
// cgroup inside the node left frozen. One pod's container cgroup and
// another pod's whole pod cgroup are frozen; on cgroup v1 the engine alone
// then cannot remove the node (`docker rm -f` fails, and the cluster must
// still be listed after that). Delete must thaw them and remove the
// cluster: no container of it left, not listed, and each frozen cgroup
// seen thawed before it went. Gated as the other kind tests are.
func TestKindDeleteThawsFrozenCgroups(t *testing.T) {
	h := findFreezer(t)
	c := clustertest.NewKind(t)
	if _, err := exec.LookPath("docker"); err != nil || os.Getenv("KIND_EXPERIMENTAL_PROVIDER") == "podman" {
		t.Skip("this test reads the node container through the docker CLI")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	kindName := "oplab-" + c.Name
	nodeID := strings.TrimSpace(dockerOut(t, "inspect", "--format", "{{.Id}}", kindName+"-control-plane"))
	t.Logf("freezer: %s (v2 %v)", h.mount, h.v2)

	ctrs := map[string]string{} // pod → container id
	for _, pod := range []string{"frozen-container", "frozen-pod"} {
		ctrs[pod] = runPause(ctx, t, c, pod)
	}
	ctrDir := h.find(t, ctrs["frozen-container"])
	podDir := filepath.Dir(h.find(t, ctrs["frozen-pod"]))
	for _, dir := range []string{ctrDir, podDir} {
		if !strings.Contains(dir, nodeID) {
			t.Fatalf("cgroup %s is not under the node container %s", dir, nodeID)
		}
	}
	if !strings.Contains(filepath.Base(podDir), "pod") {
		t.Fatalf("cgroup %s: want a pod's cgroup", podDir)
	}
	for _, dir := range []string{ctrDir, podDir} {
		h.freeze(ctx, t, dir)
	}
	t.Logf("frozen: %s and %s", ctrDir, podDir)

	if !h.v2 {
		// On v1 a frozen task does not die: the engine cannot remove the
		// node, which is what the provider must recover from.
		start := time.Now()
		out, err := exec.CommandContext(ctx, "docker", "rm", "-f", "-v", kindName+"-control-plane").CombinedOutput()
		if err == nil {
			t.Fatalf("docker rm -f of a node with a frozen pod cgroup succeeded; want it to fail as it did on this machine (the test proves nothing otherwise)")
		}
		t.Logf("docker rm -f failed as expected after %s: %s", time.Since(start).Round(time.Second), strings.TrimSpace(string(out)))
		list, err := c.Provider.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(list, func(s cluster.Status) bool { return s.Name == c.Name }) {
			t.Fatalf("after the failed removal List does not report %s, want it still listed: %+v", c.Name, list)
		}
	}

	w := watchStates(h, ctrDir, podDir)
	start := time.Now()
	err := c.Provider.Delete(ctx, c.Name)
	took := time.Since(start)
	seen := w.stop()
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	t.Logf("deleted in %s", took.Round(100*time.Millisecond))

	if left := strings.TrimSpace(dockerOut(t, "ps", "-a", "-q", "--filter", "label=io.x-k8s.kind.cluster="+kindName)); left != "" {
		t.Errorf("containers of %s after delete: got %q, want none", kindName, left)
	}
	list, err := c.Provider.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(list, func(s cluster.Status) bool { return s.Name == c.Name }) {
		t.Errorf("List after delete reports %s, want it gone", c.Name)
	}
	if _, err := c.Provider.Status(ctx, c.Name); !errors.Is(err, cluster.ErrNotFound) {
		t.Errorf("status after delete: got %v, want ErrNotFound", err)
	}
	for _, dir := range []string{ctrDir, podDir} {
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("cgroup %s after delete: got %v, want it gone", dir, err)
		}
		if !slices.Contains(seen[dir], h.thawed) {
			t.Errorf("cgroup %s went through %q, want it seen %s before it went", dir, seen[dir], h.thawed)
		}
	}
}

// runPause runs a pod of the pause image the node already has and returns
// its container's id.
func runPause(ctx context.Context, t *testing.T, c *clustertest.Cluster, name string) string {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "pause", Image: "registry.k8s.io/pause:3.10", ImagePullPolicy: corev1.PullNever,
		}}},
	}
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var id string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) == 0 {
			return false, nil
		}
		id = p.Status.ContainerStatuses[0].ContainerID
		return id != "", nil
	})
	if err != nil {
		t.Fatalf("pod %s did not run: %v", name, err)
	}
	_, id, _ = strings.Cut(id, "://")
	return id
}

func dockerOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).Output()
	if err != nil {
		t.Fatalf("docker %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// freezer is the host's freezer hierarchy: v1's freezer.state, or v2's
// cgroup.freeze.
type freezer struct {
	mount  string
	v2     bool
	thawed string // what a thawed cgroup reads as
}

func findFreezer(t *testing.T) freezer {
	t.Helper()
	// The root cgroup has no freezer.state: it cannot be frozen.
	if _, err := os.Stat("/sys/fs/cgroup/freezer/cgroup.procs"); err == nil {
		return freezer{mount: "/sys/fs/cgroup/freezer", thawed: "THAWED"}
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return freezer{mount: "/sys/fs/cgroup", v2: true, thawed: "thawed"}
	}
	t.Skip("no cgroup freezer on this host")
	return freezer{}
}

// find returns the cgroup named with the container id.
func (h freezer) find(t *testing.T, id string) string {
	t.Helper()
	var found string
	_ = filepath.WalkDir(h.mount, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.Contains(d.Name(), id) {
			found = path
			return filepath.SkipAll
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no cgroup of container %s under %s", id, h.mount)
	}
	return found
}

func (h freezer) state(dir string) string {
	if !h.v2 {
		b, err := os.ReadFile(filepath.Join(dir, "freezer.state"))
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return ""
	}
	if strings.Contains(string(b), "frozen 1") {
		return "frozen"
	}
	return "thawed"
}

func (h freezer) freeze(ctx context.Context, t *testing.T, dir string) {
	t.Helper()
	file, value, want := "freezer.state", "FROZEN", "FROZEN"
	if h.v2 {
		file, value, want = "cgroup.freeze", "1", "frozen"
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0o644); err != nil {
		t.Fatalf("freeze %s: %v", dir, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return h.state(dir) == want, nil
	})
	if err != nil {
		t.Fatalf("freeze %s: still %s: %v", dir, h.state(dir), err)
	}
}

// stateWatch records each cgroup's states as they change, "" once gone.
type stateWatch struct {
	done chan struct{}
	wg   sync.WaitGroup
	seen map[string][]string
}

// watchStates polls the cgroups' states until stop: often enough to see a
// thaw, which the provider waits for before it removes the node, and the
// engine takes far longer than a poll to remove the node's cgroups.
func watchStates(h freezer, dirs ...string) *stateWatch {
	w := &stateWatch{done: make(chan struct{}), seen: map[string][]string{}}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, dir := range dirs {
				s := h.state(dir)
				if seen := w.seen[dir]; len(seen) == 0 || seen[len(seen)-1] != s {
					w.seen[dir] = append(seen, s)
				}
			}
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *stateWatch) stop() map[string][]string {
	close(w.done)
	w.wg.Wait()
	return w.seen
}
