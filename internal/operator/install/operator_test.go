package install

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/oplog"
)

// TestInstallRealOperator installs the chart with the real pg-operator as the
// host process: it must become ready under the chart's least-privilege RBAC,
// reconcile a PostgresCluster from the course, and its reconcile log must be
// the Deployment's log.
func TestInstallRealOperator(t *testing.T) {
	c := clustertest.New(t)
	dir := t.TempDir()
	for name, pkg := range map[string]string{"hostpod": "oplab.dev/oplab/cmd/hostpod", "pg-operator": "oplab.dev/oplab/cmd/pg-operator"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	in, err := ForCluster(c.Provider, c.Name, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := in.Install(ctx)
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	t.Cleanup(func() {
		if err := in.Uninstall(context.Background()); err != nil {
			t.Errorf("uninstall: %v", err)
		}
	})

	// The CRD came from the chart; the course's example applies as it is.
	dyn := dynamic.NewForConfigOrDie(c.Config)
	gvr := schema.GroupVersionResource{Group: "databases.example.com", Version: "v1", Resource: "postgresclusters"}
	pgc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "databases.example.com/v1",
		"kind":       "PostgresCluster",
		"metadata":   map[string]any{"name": "prod-db", "namespace": "default"},
		"spec": map[string]any{
			"replicas":  int64(3),
			"version":   "15",
			"backup":    map[string]any{"schedule": "0 2 * * *", "retention": "7d"},
			"resources": map[string]any{"requests": map[string]any{"memory": "2Gi", "cpu": "1"}},
		},
	}}
	if _, err := dyn.Resource(gvr).Namespace("default").Create(ctx, pgc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the course's PostgresCluster: %v", err)
	}
	// The operator, with only its ServiceAccount's rights, makes the
	// StatefulSet.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.AppsV1().StatefulSets("default").Get(ctx, "prod-db", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the operator never made StatefulSet prod-db: %v\nits log:\n%s", err, tail(40, res.Host.LogPath))
	}
	// Its log is the Deployment's log. The StatefulSet can exist before the
	// line saying the operator made it has reached the log file.
	var out strings.Builder
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		out.Reset()
		if err := (PodLog{Config: c.Config}).Lines(ctx, false, func(l oplog.Line) error {
			out.WriteString(l.Text + "\n")
			return nil
		}); err != nil {
			return false, err
		}
		return strings.Contains(out.String(), "prod-db"), nil
	})
	t.Logf("operator log, first lines:\n%s", abbrev(out.String()[:min(len(out.String()), 1500)]))
	if err != nil {
		t.Errorf("operator log = %q, want lines about prod-db (%v)", abbrev(out.String()), err)
	}
	// The page, `oplab logs` and the grader read the log where the host
	// process writes it, the previous run's first.
	want := oplog.Files{res.Host.PreviousLogPath, res.Host.LogPath}
	if got, ok := OperatorLog(c.Provider, c.Name, c.Config, Release{}).(oplog.Files); !ok || !slices.Equal(got, want) {
		t.Errorf("OperatorLog of the reference operator: got %#v, want the host process's files %q", got, want)
	}
	// Another operator runs as a pod, even where the reference one does not.
	other := Release{Name: "other", Namespace: "other", Deployment: "other", Container: "other"}
	if got, ok := OperatorLog(c.Provider, c.Name, c.Config, other).(PodLog); !ok || got.Release != other {
		t.Errorf("OperatorLog of a third-party operator: got %#v, want its pod's log", got)
	}
}
