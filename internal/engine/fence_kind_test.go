package engine

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/fence"
)

// TestFenceOnKind: on kind the node is a privileged container, so a pod
// that reaches the node reaches the machine. Through the kubeconfig the
// web console gets, with the cluster line's kubectl, a learner is refused
// a privileged pod, a hostPath pod, a hostNetwork pod and `kubectl debug
// node/...`; the bootstrap token kind joins its node with is gone; and a
// plain Deployment of the learner's still runs (its pods are made,
// scheduled and started by the trusted components, whose Events are
// written). Gated like every kind test (clustertest.NewKindProvider); in
// `make test`'s kind phase.
func TestFenceOnKind(t *testing.T) {
	c := clustertest.NewKind(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	if err := fence.Install(ctx, c.Config); err != nil {
		t.Fatal(err)
	}
	path := fence.KubeconfigPath(c.Kubeconfig)
	if _, err := fence.Kubeconfig(ctx, c.Config, path); err != nil {
		t.Fatal(err)
	}
	kubectl := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(clustertest.BinDir(t), "kubectl"), args...)
		cmd.Env = []string{"KUBECONFIG=" + path, "HOME=" + t.TempDir()}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return strings.TrimSpace(out.String()), err
	}
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("list nodes: %v", err)
	}
	node := nodes.Items[0].Name

	refused := []struct {
		name string
		args []string
		want string
	}{
		{"a privileged pod", []string{"run", "priv", "--image=busybox", "--privileged"}, "oplab: privileged containers are not allowed"},
		{"a hostPath pod", []string{"run", "host", "--image=busybox", "--overrides",
			`{"spec":{"volumes":[{"name":"h","hostPath":{"path":"/"}}],"containers":[{"name":"host","image":"busybox","volumeMounts":[{"name":"h","mountPath":"/host"}]}]}}`},
			"oplab: hostPath and other node volumes are not allowed"},
		{"a hostNetwork pod", []string{"run", "net", "--image=busybox", "--overrides", `{"spec":{"hostNetwork":true}}`}, "oplab: hostNetwork, hostPID and hostIPC are not allowed"},
		{"kubectl debug node", []string{"debug", "node/" + node, "--image=busybox"}, "oplab: hostNetwork, hostPID and hostIPC are not allowed"},
		{"the kubelet's API", []string{"get", "--raw", "/api/v1/nodes/" + node + "/proxy/pods"}, "cannot get resource \"nodes/proxy\""},
	}
	for _, r := range refused {
		out, err := kubectl(r.args...)
		if err == nil || !strings.Contains(out, r.want) {
			t.Errorf("%s: kubectl %s: got %v: %s, want refused with %q", r.name, strings.Join(r.args, " "), err, out, r.want)
		}
	}

	tokens, err := c.Client.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{FieldSelector: "type=" + string(corev1.SecretTypeBootstrapToken)})
	if err != nil || len(tokens.Items) > 0 {
		t.Errorf("bootstrap tokens: got %d (%v), want none left", len(tokens.Items), err)
	}

	// The pause image is in the node (hack/kind/build-images.sh): no
	// registry is needed.
	if out, err := kubectl("create", "deployment", "plain", "--image=registry.k8s.io/pause:3.10"); err != nil {
		t.Fatalf("a plain Deployment: %v: %s", err, out)
	}
	err = wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := c.Client.AppsV1().Deployments("default").Get(ctx, "plain", metav1.GetOptions{})
		return err == nil && d.Status.AvailableReplicas == 1, nil
	})
	if err != nil {
		out, _ := kubectl("get", "events", "-n", "default")
		t.Errorf("the learner's plain Deployment: got no available replica (%v); events:\n%s", err, out)
	}
}
