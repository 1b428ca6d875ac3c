package install

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

var pgGVR = schema.GroupVersionResource{Group: "databases.example.com", Version: "v1", Resource: "postgresclusters"}

// kindSession is a kind cluster with the operator installed from its image
// and a two-instance PostgresCluster "db" Ready: what a lab session on kind
// starts from.
type kindSession struct {
	c   *clustertest.Cluster
	k   kubeCmd
	dyn dynamic.Interface
	// Durations of the steps, for logs and benchmarks.
	cluster, install, postgres time.Duration
}

func newKindSession(ctx context.Context, tb testing.TB) *kindSession {
	tb.Helper()
	start := time.Now()
	c := clustertest.NewKind(tb)
	s := &kindSession{c: c, k: kubeCmd{bin: clustertest.BinDir(tb), kubeconfig: c.Kubeconfig}, dyn: dynamic.NewForConfigOrDie(c.Config)}
	s.cluster = time.Since(start)

	in, err := ForCluster(c.Provider, c.Name, "", Options{Timeout: 5 * time.Minute})
	if err != nil {
		tb.Fatal(err)
	}
	if in.opts.Host != nil || in.opts.Preload == nil {
		tb.Fatal("on kind the installer must load the images and run the operator's Deployment, not a host process")
	}
	start = time.Now()
	if _, err := in.Install(ctx); err != nil {
		tb.Fatalf("install: %v\n%s", err, s.k.diagnosis(ctx))
	}
	s.install = time.Since(start)

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
	start = time.Now()
	if _, err := s.dyn.Resource(pgGVR).Namespace("default").Create(ctx, pgc, metav1.CreateOptions{}); err != nil {
		tb.Fatalf("create PostgresCluster: %v", err)
	}
	s.waitReady(ctx, tb, "")
	s.postgres = time.Since(start)
	tb.Logf("kind session ready: cluster %s, images and operator %s, PostgresCluster %s",
		s.cluster.Round(time.Second), s.install.Round(time.Second), s.postgres.Round(time.Second))
	return s
}

// waitReady waits until db is Ready with both instances and a primary
// other than notPrimary, and returns the primary.
func (s *kindSession) waitReady(ctx context.Context, tb testing.TB, notPrimary string) string {
	tb.Helper()
	var status map[string]any
	var primary string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := s.dyn.Resource(pgGVR).Namespace("default").Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		status, _, _ = unstructured.NestedMap(got.Object, "status")
		ready, _, _ := unstructured.NestedInt64(got.Object, "status", "readyReplicas")
		primary, _, _ = unstructured.NestedString(got.Object, "status", "currentPrimary")
		return ready == 2 && conditionTrue(got, "Ready") && primary != "" && primary != notPrimary, nil
	})
	if err != nil {
		tb.Fatalf("PostgresCluster db not Ready with 2 instances (and a primary other than %q): %v; status %v\n%s", notPrimary, err, status, s.k.diagnosis(ctx))
	}
	return primary
}

// TestKindOperatorRunsRealPostgres: on kind the operator runs as the
// chart's Deployment from its image and controls real PostgreSQL servers
// over SQL: the PostgresCluster becomes Ready with one primary and one
// streaming replica, and a row written on the primary is read on the
// replica. Then the data plane survives a failover: the primary's pod is
// deleted, the replica is promoted (pg_promote), the row is still there
// and the new primary takes writes. Gated: see clustertest.NewKindProvider.
func TestKindOperatorRunsRealPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 25*time.Minute)
	defer cancel()
	s := newKindSession(ctx, t)
	primary, replica := s.roles(ctx, t)
	s.k.mustPSQL(ctx, t, primary, "create table kindtest(v text); insert into kindtest values ('before the chaos')")
	if got := s.readEventually(ctx, replica, "select v from kindtest", "before the chaos"); got != "before the chaos" {
		t.Fatalf("row on the replica %s: got %q, want %q", replica, got, "before the chaos")
	}

	newPrimary, took := s.failover(ctx, t, primary)
	t.Logf("failover: %s deleted, %s alone behind db-rw after %s", primary, newPrimary, took.Round(100*time.Millisecond))
	s.waitReady(ctx, t, primary)
	if got := s.k.mustPSQL(ctx, t, newPrimary, "select pg_is_in_recovery()"); got != "f" {
		t.Errorf("new primary %s: pg_is_in_recovery() = %q, want f", newPrimary, got)
	}
	if got := s.k.mustPSQL(ctx, t, newPrimary, "select v from kindtest"); got != "before the chaos" {
		t.Errorf("row after failover on %s: got %q, want %q", newPrimary, got, "before the chaos")
	}
	s.k.mustPSQL(ctx, t, newPrimary, "insert into kindtest values ('after the chaos')")
	// The old primary's pod came back as a replica of the new primary.
	if got := s.readEventually(ctx, primary, "select count(*) from kindtest", "2"); got != "2" {
		t.Errorf("rows on the rejoined %s: got %q, want 2", primary, got)
	}
}

// failover deletes the primary's pod and returns the new primary and the
// time until it alone is behind the db-rw Service: what BenchmarkFailover
// measures on embedded clusters.
func (s *kindSession) failover(ctx context.Context, tb testing.TB, primary string) (string, time.Duration) {
	tb.Helper()
	start := time.Now()
	if err := s.c.Client.CoreV1().Pods("default").Delete(ctx, primary, metav1.DeleteOptions{}); err != nil {
		tb.Fatalf("delete the primary's pod: %v", err)
	}
	var rw []string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		rw = s.endpoints(ctx, "db-rw")
		return len(rw) == 1 && rw[0] != primary, nil
	})
	if err != nil {
		tb.Fatalf("no new primary alone behind db-rw after deleting %s: %v; endpoints %v\n%s", primary, err, rw, s.k.diagnosis(ctx))
	}
	return rw[0], time.Since(start)
}

// endpoints names the pods behind the ready endpoints of svc.
func (s *kindSession) endpoints(ctx context.Context, svc string) []string {
	list, err := s.c.Client.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return nil
	}
	var names []string
	for _, sl := range list.Items {
		for _, ep := range sl.Endpoints {
			if ep.TargetRef != nil && (ep.Conditions.Ready == nil || *ep.Conditions.Ready) {
				names = append(names, ep.TargetRef.Name)
			}
		}
	}
	return names
}

// roles returns the primary and the replica pod of db, by asking the
// servers themselves.
func (s *kindSession) roles(ctx context.Context, t *testing.T) (primary, replica string) {
	t.Helper()
	roles := map[string]string{}
	for _, pod := range []string{"db-0", "db-1"} {
		roles[pod] = s.k.mustPSQL(ctx, t, pod, "select pg_is_in_recovery()")
		switch roles[pod] {
		case "f":
			primary = pod
		case "t":
			replica = pod
		}
	}
	if primary == "" || replica == "" {
		t.Fatalf("pg_is_in_recovery per pod: got %v, want one f (primary) and one t (replica)", roles)
	}
	return primary, replica
}

// readEventually runs a query on pod until it answers want (replication
// and a restarting server take a moment), and returns the last answer.
func (s *kindSession) readEventually(ctx context.Context, pod, sql, want string) string {
	var got string
	// A replica applies what its primary streams a moment later: the
	// answer is awaited, not taken from the first query that succeeds.
	_ = wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		out, err := s.k.psql(ctx, pod, sql)
		got = out
		return err == nil && out == want, nil
	})
	return got
}

// BenchmarkKindSession measures a lab session on kind with real
// PostgreSQL: s/ready is what a learner waits for (cluster created, images
// loaded, operator ready, a two-instance PostgresCluster Ready; compare
// BenchmarkLabStartToFirstExercise on embedded), MiB-node the node
// container's memory then, and s-failover the time from deleting the
// primary's pod to the new primary alone behind db-rw (compare
// BenchmarkFailover on embedded). Gated like the tests.
func BenchmarkKindSession(b *testing.B) {
	for b.Loop() {
		ctx, cancel := context.WithTimeout(b.Context(), 25*time.Minute)
		start := time.Now()
		s := newKindSession(ctx, b)
		b.ReportMetric(time.Since(start).Seconds(), "s/ready")
		b.ReportMetric(s.cluster.Seconds(), "s-cluster")
		b.ReportMetric(s.postgres.Seconds(), "s-postgres")
		if mib, err := clustertest.KindNodeMemory(ctx, s.c.Name); err == nil {
			b.ReportMetric(mib, "MiB-node")
		} else {
			b.Logf("node memory: %v", err)
		}
		primary := s.waitReady(ctx, b, "")
		_, took := s.failover(ctx, b, primary)
		b.ReportMetric(took.Seconds(), "s-failover")
		cancel()
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

func (k kubeCmd) mustPSQL(ctx context.Context, t testing.TB, pod, sql string) string {
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
	return "operator log:\n" + log + "\n\npods:\n" + pods
}
