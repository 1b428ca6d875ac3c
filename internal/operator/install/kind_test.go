package install

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestKindOperatorRunsRealPostgres installs the chart on a kind cluster,
// where the operator runs as the chart's Deployment from its image and
// controls real PostgreSQL servers over SQL: a two-instance
// PostgresCluster becomes Ready with one primary and one streaming replica,
// and a row written on the primary is read on the replica. Gated: see
// clustertest.NewKindProvider.
func TestKindOperatorRunsRealPostgres(t *testing.T) {
	c := clustertest.NewKind(t)
	k := kubeCmd{bin: clustertest.BinDir(t), kubeconfig: c.Kubeconfig}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()
	in, err := ForCluster(c.Provider, c.Name, "", Options{Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if in.opts.Host != nil || in.opts.Preload == nil {
		t.Fatal("on kind the installer must load the images and run the operator's Deployment, not a host process")
	}
	start := time.Now()
	if _, err := in.Install(ctx); err != nil {
		t.Fatalf("install: %v", err)
	}
	t.Logf("images loaded and operator Deployment ready in %s", time.Since(start).Round(time.Second))

	dyn := dynamic.NewForConfigOrDie(c.Config)
	gvr := schema.GroupVersionResource{Group: "databases.example.com", Version: "v1", Resource: "postgresclusters"}
	pgc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "databases.example.com/v1",
		"kind":       "PostgresCluster",
		"metadata":   map[string]any{"name": "db", "namespace": "default"},
		"spec": map[string]any{
			"replicas":  int64(2),
			"version":   "15",
			"storage":   map[string]any{"size": "1Gi"},
			"resources": map[string]any{"requests": map[string]any{"memory": "128Mi", "cpu": "100m"}},
		},
	}}
	if _, err := dyn.Resource(gvr).Namespace("default").Create(ctx, pgc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create PostgresCluster: %v", err)
	}
	start = time.Now()
	var status map[string]any
	err = wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := dyn.Resource(gvr).Namespace("default").Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		status, _, _ = unstructured.NestedMap(got.Object, "status")
		ready, _, _ := unstructured.NestedInt64(got.Object, "status", "readyReplicas")
		return ready == 2 && conditionTrue(got, "Ready"), nil
	})
	if err != nil {
		t.Fatalf("PostgresCluster db not Ready with 2 instances: %v; status %v\noperator log:\n%s", err, status, k.diagnosis(ctx))
	}
	t.Logf("PostgresCluster Ready in %s", time.Since(start).Round(time.Second))

	// Real servers: one primary, one replica in recovery, and replication
	// carries a row from the one to the other.
	roles := map[string]string{}
	for _, pod := range []string{"db-0", "db-1"} {
		roles[pod] = k.mustPSQL(ctx, t, pod, "select pg_is_in_recovery()")
	}
	var primary, replica string
	for pod, inRecovery := range roles {
		switch inRecovery {
		case "f":
			primary = pod
		case "t":
			replica = pod
		}
	}
	if primary == "" || replica == "" {
		t.Fatalf("pg_is_in_recovery per pod: got %v, want one f (primary) and one t (replica)", roles)
	}
	k.mustPSQL(ctx, t, primary, "create table kindtest(v text); insert into kindtest values ('written on the primary')")
	var got string
	err = wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, _ = k.psql(ctx, replica, "select v from kindtest")
		return got == "written on the primary", nil
	})
	if err != nil {
		t.Errorf("row on the replica %s: got %q, want %q", replica, got, "written on the primary")
	}
}

func conditionTrue(obj *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}

// kubeCmd runs kubectl against one cluster.
type kubeCmd struct{ bin, kubeconfig string }

func (k kubeCmd) run(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(k.bin, "kubectl"), append([]string{"--kubeconfig", k.kubeconfig}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// psql runs sql in the postgres container of pod as the cluster's
// superuser over the local socket.
func (k kubeCmd) psql(ctx context.Context, pod, sql string) (string, error) {
	return k.run(ctx, "exec", pod, "-c", "postgres", "--", "sh", "-c",
		fmt.Sprintf(`psql -U "$POSTGRES_USER" -d postgres -v ON_ERROR_STOP=1 -tAc %q`, sql))
}

func (k kubeCmd) mustPSQL(ctx context.Context, t *testing.T, pod, sql string) string {
	t.Helper()
	out, err := k.psql(ctx, pod, sql)
	if err != nil {
		t.Fatalf("psql in %s: %v\n%s", pod, err, out)
	}
	return out
}

// diagnosis is the operator's log tail and every pod, for failures.
func (k kubeCmd) diagnosis(ctx context.Context) string {
	log, _ := k.run(ctx, "logs", "-n", Namespace, "deploy/"+Deployment, "--tail", "40")
	pods, _ := k.run(ctx, "get", "pods", "-A", "-o", "wide")
	return log + "\n\npods:\n" + pods
}
