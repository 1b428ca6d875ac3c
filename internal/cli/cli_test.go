package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// run executes the oplab command line and returns its output.
func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err = Run(ctx, Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), err
}

// TestClusterCommands drives create, list, kubeconfig and delete as a user
// would, and uses the printed kubeconfig with the kubectl built beside the
// control plane.
func TestClusterCommands(t *testing.T) {
	bin := clustertest.BinDir(t)
	data := t.TempDir()
	flags := []string{"--data-dir", data, "--bin-dir", bin}
	t.Cleanup(func() { run(t, append([]string{"cluster", "delete", "--all"}, flags...)...) })

	out, _, err := run(t, append([]string{"cluster", "create", "learner"}, flags...)...)
	if err != nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
	for _, want := range []string{"Starting etcd", "Starting kube-apiserver", "✓ Waiting for the node to be Ready", "is ready", "kubectl --kubeconfig"} {
		if !strings.Contains(out, want) {
			t.Errorf("create output lacks %q:\n%s", want, out)
		}
	}

	kc, _, err := run(t, append([]string{"cluster", "kubeconfig", "learner"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	kc = strings.TrimSpace(kc)
	if kc != filepath.Join(data, "clusters", "learner", "kubeconfig") {
		t.Errorf("kubeconfig path: got %q", kc)
	}
	kubectl := exec.Command(filepath.Join(bin, "kubectl"), "--kubeconfig", kc, "get", "nodes", "-o", "name")
	got, err := kubectl.CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != "node/oplab-worker" {
		t.Errorf("kubectl get nodes: got %q (%v), want node/oplab-worker", got, err)
	}

	out, _, err = run(t, append([]string{"cluster", "list", "-o", "json"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	var list []cluster.Status
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("list -o json: %v\n%s", err, out)
	}
	if len(list) != 1 || list[0].Name != "learner" || list[0].State != cluster.StateRunning {
		t.Errorf("list: got %+v, want learner running", list)
	}
	out, _, _ = run(t, append([]string{"cluster", "list"}, flags...)...)
	if !strings.Contains(out, "learner") || !strings.Contains(out, "running") {
		t.Errorf("list table lacks the cluster:\n%s", out)
	}

	if _, _, err := run(t, append([]string{"cluster", "create", "learner"}, flags...)...); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("duplicate create: got %v, want 'already exists'", err)
	}

	out, _, err = run(t, append([]string{"cluster", "delete", "learner"}, flags...)...)
	if err != nil || !strings.Contains(out, `Deleted cluster "learner"`) {
		t.Fatalf("delete: %v\n%s", err, out)
	}
	out, _, _ = run(t, append([]string{"cluster", "list"}, flags...)...)
	if !strings.Contains(out, "No clusters") {
		t.Errorf("list after delete:\n%s", out)
	}
}

func TestUsageErrors(t *testing.T) {
	data := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "create"}, "accepts 1 arg"},
		{[]string{"cluster", "create", "Bad_Name"}, "invalid cluster name"},
		{[]string{"cluster", "delete"}, "name the clusters to delete, or give --all"},
		{[]string{"cluster", "delete", "x", "--all"}, "not both"},
		{[]string{"cluster", "delete", "ghost"}, "cluster not found"},
		{[]string{"cluster", "kubeconfig", "ghost"}, "cluster not found"},
		{[]string{"cluster", "list", "-o", "yaml"}, "unknown output format"},
		{[]string{"cluster", "create", "x", "--api-port", "70000"}, "out of range"},
		{[]string{"nonsense"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := run(t, append(tt.args, "--data-dir", data, "--bin-dir", t.TempDir())...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
