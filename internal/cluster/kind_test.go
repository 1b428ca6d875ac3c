package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestKindLifecycle makes a real kind cluster from the node image, checks
// that it is reported, that its node is Ready, that its CPU cap is lifted
// and put back as a start and a build ask (checkCap), that a loaded image runs in
// a pod with no registry, and that Delete removes it. Gated: see
// clustertest.NewKindProvider.
func TestKindLifecycle(t *testing.T) {
	var steps []cluster.Step
	start := time.Now()
	c := clustertest.NewKind(t, cluster.CreateUnsettled(), cluster.CreateWithProgress(func(s cluster.Step) { steps = append(steps, s) }))
	t.Logf("kind cluster %s ready in %s", c.Name, time.Since(start).Round(time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()

	var done []string
	for _, s := range steps {
		if s.Done {
			if s.Err != nil {
				t.Errorf("step %q failed: %v", s.Name, s.Err)
			}
			done = append(done, s.Name)
		}
	}
	if len(done) < 3 || !slices.Contains(done, "Waiting for the default ServiceAccount") {
		t.Errorf("finished steps: got %q, want kind's steps and the ServiceAccount wait", done)
	}
	// Named by no variable (test-env.sh names none), the node image is the
	// one `make images` built: a machine without a registry needs nothing
	// more.
	nodeImage := os.Getenv(cluster.KindNodeImageEnv)
	if nodeImage == "" {
		nodeImage = cluster.KindOfflineNodeImage
	}
	if want := "Ensuring node image (" + nodeImage + ")"; !slices.Contains(done, want) {
		t.Errorf("finished steps: got %q, want %q", done, want)
	}

	// The node container is bounded by its budget (budget.Kind).
	out, err := exec.CommandContext(ctx, "docker", "inspect", "-f", "{{.HostConfig.Memory}} {{.HostConfig.MemorySwap}} {{.HostConfig.PidsLimit}}", "oplab-"+c.Name+"-control-plane").CombinedOutput()
	if want := fmt.Sprintf("%d %d %d", budget.Kind.Memory, budget.Kind.Memory, budget.Kind.Tasks); err != nil || strings.TrimSpace(string(out)) != want {
		t.Errorf("the node container's limits (memory, memory and swap, tasks): %s %v; want %s", out, err, want)
	}
	checkCap(t, ctx, c)

	st, err := c.Provider.Status(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != cluster.StateRunning || st.Provider != "kind" || len(st.Components) != 1 {
		t.Errorf("status: got state %s, provider %s, %d components; want running, kind, 1", st.State, st.Provider, len(st.Components))
	}
	list, err := c.Provider.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list, func(s cluster.Status) bool { return s.Name == c.Name }) {
		t.Errorf("List does not report %s: %+v", c.Name, list)
	}
	if err := c.Provider.Create(ctx, c.Name); !errors.Is(err, cluster.ErrAlreadyExists) {
		t.Errorf("second Create: got %v, want ErrAlreadyExists", err)
	}

	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 1 || !nodeReady(nodes.Items[0]) {
		t.Fatalf("nodes: got %d, want 1 Ready", len(nodes.Items))
	}

	// The operator image exists only in the local engine: the pod can run
	// it only if LoadImages copied it into the node (pull policy Never).
	const image = "oplab.dev/pg-operator:0.1.0"
	if err := c.Provider.LoadImages(ctx, c.Name, image); err != nil {
		t.Fatalf("load image: %v", err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "loaded", Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "op", Image: image, ImagePullPolicy: corev1.PullNever, Args: []string{"--help"},
			}},
		},
	}
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var last *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		last, err = c.Client.CoreV1().Pods("default").Get(ctx, "loaded", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cs := range last.Status.ContainerStatuses {
			if cs.State.Terminated != nil {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("the pod of the loaded image did not run: %v; status %+v", err, last.Status)
	}

	checkWall(t, ctx, c, nodeImage)

	if err := c.Provider.Delete(ctx, c.Name); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := c.Provider.Status(ctx, c.Name); !errors.Is(err, cluster.ErrNotFound) {
		t.Errorf("status after delete: got %v, want ErrNotFound", err)
	}
}

// TestKindNodeImageMissing, on the real engine: a node image the engine
// lacks and cannot pull fails Create in one line that says to run `make
// images` or set the variable, and starts nothing. Gated as the other kind
// tests are; it makes no cluster.
func TestKindNodeImageMissing(t *testing.T) {
	clustertest.NewKindProvider(t) // the gate
	const missing = "oplab.local/no-such-node:v0.0.0"
	dir := t.TempDir()
	p, err := cluster.NewProvider(cluster.ProviderWithKind(cluster.KindOptions{
		DataDir: dir, NodeImage: missing, ConfigPath: os.Getenv("OPLAB_KIND_CONFIG"),
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	name := clustertest.UniqueName("t")
	err = p.Create(ctx, name)
	if !errors.Is(err, cluster.ErrNoKindNodeImage) {
		t.Fatalf("create: got %v, want ErrNoKindNodeImage", err)
	}
	msg := err.Error()
	t.Logf("create: %s", msg)
	for _, want := range []string{"has no " + missing, "run `make images`", cluster.KindNodeImageEnv} {
		if !strings.Contains(msg, want) {
			t.Errorf("create: got %q, want it to say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("create: got %d lines, want one", strings.Count(msg, "\n")+1)
	}
	if _, err := p.Status(ctx, name); !errors.Is(err, cluster.ErrNotFound) {
		t.Errorf("status after the failed create: got %v, want ErrNotFound", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("data dir has %d entries after a failed create, want 0", len(entries))
	}
}

func nodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ProviderByName picks the backend the CLI's --provider names; the kind
// backend is built without touching any engine, and image loading is
// refused where containers do not run.
func TestProviderByName(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		want     string
		wantErr  string
		loadsImg bool
	}{
		{name: "embedded", want: "embedded"},
		{name: "kind", want: "kind", loadsImg: true},
		{name: "minikube", wantErr: `unknown cluster provider "minikube"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := cluster.NewProvider(cluster.ProviderByName(tt.name, cluster.Options{BinDir: dir, DataDir: dir}))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			info := p.Info()
			if info.Name != tt.want || info.Capabilities.LoadImages != tt.loadsImg || info.Capabilities.RealContainers != tt.loadsImg {
				t.Errorf("got %+v, want backend %s with image loading and real containers %v", info, tt.want, tt.loadsImg)
			}
			if !tt.loadsImg {
				if err := p.LoadImages(context.Background(), "x", "img:1"); !errors.Is(err, cluster.ErrUnsupported) {
					t.Errorf("LoadImages on %s: got %v, want ErrUnsupported", tt.name, err)
				}
			}
		})
	}
}
