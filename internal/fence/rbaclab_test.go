package fence

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/operator/install"
)

// kubectl runs the cluster line's kubectl with only the learner's
// kubeconfig, as the web console does.
type kubectl struct {
	bin, kubeconfig string
}

func (k kubectl) run(ctx context.Context, stdin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, k.bin, args...)
	cmd.Env = []string{"KUBECONFIG=" + k.kubeconfig, "HOME=" + filepath.Dir(k.kubeconfig)}
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// The rbac lab, done by a learner with kubectl through the kubeconfig the
// console gets, on a cluster with the operator installed: the operator's
// ClusterRole loses a verb, the learner sees it with `kubectl auth can-i
// --as`, and puts it back (escalation prevention allows it: the learner
// holds every rule of the role). Making the role a wildcard or binding
// cluster-admin is refused by RBAC; the operator's Deployment may be scaled
// (the operator-basics lab) but not changed; the node stays out of reach.
func TestLearnerRepairsTheOperatorsRole(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	if err := Install(ctx, c.Config); err != nil {
		t.Fatal(err)
	}
	bin := clustertest.BinDir(t)
	in, err := install.ForCluster(c.Provider, c.Name, bin, install.Options{Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Install(ctx); err != nil {
		t.Fatalf("install the operator: %v", err)
	}
	path := KubeconfigPath(c.Kubeconfig)
	if _, err := Kubeconfig(ctx, c.Config, path); err != nil {
		t.Fatal(err)
	}
	k := kubectl{bin: filepath.Join(bin, "kubectl"), kubeconfig: path}

	canI := []string{"auth", "can-i", "update", "statefulsets", "--as=system:serviceaccount:oplab-system:pg-operator", "-n", "default"}
	expectCanI := func(want string) {
		t.Helper()
		if got, _ := k.run(ctx, "", canI...); got != want {
			t.Errorf("kubectl %s: got %q, want %q", strings.Join(canI, " "), got, want)
		}
	}
	expectCanI("yes")

	// Break, then repair, as `kubectl edit clusterrole pg-operator` would.
	out, err := k.run(ctx, "", "get", "clusterrole", install.ReleaseName, "-o", "json")
	if err != nil {
		t.Fatalf("kubectl get clusterrole: %v: %s", err, out)
	}
	var role rbacv1.ClusterRole
	if err := json.Unmarshal([]byte(out), &role); err != nil {
		t.Fatal(err)
	}
	chart := role.DeepCopy()
	for i, r := range role.Rules {
		if slices.Contains(r.Resources, "statefulsets") {
			role.Rules[i].Verbs = slices.DeleteFunc(slices.Clone(r.Verbs), func(v string) bool { return v == "update" })
		}
	}
	replace := func(what string, r *rbacv1.ClusterRole) {
		t.Helper()
		data, _ := json.Marshal(r)
		if out, err := k.run(ctx, string(data), "replace", "-f", "-"); err != nil {
			t.Fatalf("%s: kubectl replace: %v: %s", what, err, out)
		}
	}
	replace("remove update on statefulsets", &role)
	expectCanI("no")
	current, err := c.Client.RbacV1().ClusterRoles().Get(ctx, install.ReleaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	chart.ResourceVersion = current.ResourceVersion
	replace("put the chart's rules back", chart)
	expectCanI("yes")

	refusals := []struct {
		name string
		args []string
		want string
	}{
		{"make the role a wildcard", []string{"patch", "clusterrole", install.ReleaseName, "-p", `{"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}`}, "not currently held"},
		{"bind cluster-admin", []string{"create", "clusterrolebinding", "pg-operator-admin", "--clusterrole=cluster-admin", "--serviceaccount=oplab-system:pg-operator"}, "not currently held"},
		{"change the operator's image", []string{"set", "image", "deployment/pg-operator", "-n", "oplab-system", "*=mine"}, "oplab: changes in namespace oplab-system are not allowed"},
		{"a token for the operator", []string{"create", "token", "pg-operator", "-n", "oplab-system"}, "oplab: changes in namespace oplab-system are not allowed"},
		{"debug the node", []string{"debug", "node/" + nodeName(t, ctx, c), "--image=busybox"}, "oplab: hostNetwork, hostPID and hostIPC are not allowed"},
		{"a privileged pod", []string{"run", "p", "--image=busybox", "--privileged"}, "oplab: privileged containers are not allowed"},
		{"approve a CSR", []string{"certificate", "approve", "node"}, "cannot update resource \"certificatesigningrequests/approval\""},
	}
	csr := map[string]any{"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": map[string]any{"name": "node"},
		"spec": map[string]any{"request": nodeCSR(nodeName(t, ctx, c)), "signerName": "kubernetes.io/kube-apiserver-client", "usages": []string{"client auth"}}}
	data, _ := json.Marshal(csr)
	if out, err := k.run(ctx, string(data), "create", "-f", "-"); err != nil {
		t.Fatalf("kubectl create a CSR: %v: %s", err, out)
	}
	for _, r := range refusals {
		out, err := k.run(ctx, "", r.args...)
		if err == nil || !strings.Contains(out, r.want) {
			t.Errorf("%s: kubectl %s: got %v: %s, want refused with %q", r.name, strings.Join(r.args, " "), err, out, r.want)
		}
	}

	// The operator-basics lab's command, both ways.
	for _, n := range []string{"0", "1"} {
		if out, err := k.run(ctx, "", "scale", "deployment", "pg-operator", "-n", "oplab-system", "--replicas="+n); err != nil {
			t.Errorf("kubectl scale deployment pg-operator --replicas=%s: %v: %s", n, err, out)
		}
	}
}

func nodeName(t *testing.T, ctx context.Context, c *clustertest.Cluster) string {
	t.Helper()
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("list nodes: %v", err)
	}
	return nodes.Items[0].Name
}
