package controller_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/cmd/pg-operator/app"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/operator/instance"
	"oplab.dev/oplab/internal/operator/specs"
)

func TestMain(m *testing.M) {
	// Informers log through controller-runtime's global logger; each
	// operator in these tests has its own.
	log.SetLogger(logr.Discard())
	os.Exit(clustertest.Main(m))
}

// Paths of the generated files, from this package's directory.
const (
	crdPath  = "../../../config/crd/databases.example.com_postgresclusters.yaml"
	rolePath = "../../../config/rbac/role.yaml"
)

// env is a real cluster with the CRD installed.
type env struct {
	kubeconfig string
	cfg        *rest.Config
	cl         client.Client
	cs         kubernetes.Interface
}

// newEnv starts an embedded cluster for t and installs the generated CRD.
func newEnv(t testing.TB) *env {
	t.Helper()
	c := clustertest.New(t)
	scheme := app.Scheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(c.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	readYAML(t, crdPath, &crd)
	ctx := context.Background()
	if err := cl.Create(ctx, &crd); err != nil {
		t.Fatalf("install CRD: %v", err)
	}
	e := &env{kubeconfig: c.Kubeconfig, cfg: c.Config, cl: cl, cs: c.Client}
	e.waitFor(t, 30*time.Second, "CRD established", func() (bool, string) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(&crd), &crd); err != nil {
			return false, err.Error()
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return cl.List(ctx, &pgv1.PostgresClusterList{}) == nil, "listing PostgresClusters"
			}
		}
		return false, "not established"
	})
	return e
}

func readYAML(t testing.TB, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
}

// namespace creates a namespace for one scenario.
func (e *env) namespace(t testing.TB, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := e.cl.Create(context.Background(), ns); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	return name
}

// operator runs the operator's manager in-process, wired as
// cmd/pg-operator wires it, reconciling namespace ns only, until the test
// ends. Its log is returned, and printed if the test fails.
func (e *env) operator(t testing.TB, cfg *rest.Config, ns string) *syncBuffer {
	t.Helper()
	logs := &syncBuffer{}
	logger := app.NewLogger(logs)
	mgr, err := app.NewManager(cfg, app.Options{
		MetricsAddr: "0", ProbeAddr: "0", WatchNamespace: ns,
		InstanceMode: instance.ModeSimulated, SkipNameValidation: true,
	}, logger)
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("operator stopped with: %v", err)
		}
		if t.Failed() || os.Getenv("SHOWLOG") != "" {
			t.Logf("operator log:\n%s", logs.String())
		}
	})
	return logs
}

// syncBuffer is a bytes.Buffer safe for a logger and a test together.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var _ io.Writer = (*syncBuffer)(nil)

// waitFor polls cond every 100 ms until it holds, failing the test with
// cond's last description after timeout.
func (e *env) waitFor(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		ok, desc := cond()
		last = desc
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not after %s; last seen: %s", what, timeout, last)
	}
}

// cluster builds a PostgresCluster.
func cluster(ns, name string, replicas int32, mut ...func(*pgv1.PostgresCluster)) *pgv1.PostgresCluster {
	pgc := &pgv1.PostgresCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       pgv1.PostgresClusterSpec{Replicas: replicas, Version: "16"},
	}
	for _, m := range mut {
		m(pgc)
	}
	return pgc
}

func (e *env) get(t testing.TB, ns, name string) *pgv1.PostgresCluster {
	t.Helper()
	var pgc pgv1.PostgresCluster
	if err := e.cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &pgc); err != nil {
		t.Fatalf("get PostgresCluster %s: %v", name, err)
	}
	return &pgc
}

// describe is a one-line summary of a cluster's status for failures.
func describe(pgc *pgv1.PostgresCluster) string {
	var conds []string
	for _, c := range pgc.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s(%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return fmt.Sprintf("phase=%s ready=%d/%d primary=%s target=%s gen=%d/%d %s", pgc.Status.Phase,
		pgc.Status.ReadyReplicas, pgc.Spec.Replicas, pgc.Status.CurrentPrimary, pgc.Status.TargetPrimary,
		pgc.Status.ObservedGeneration, pgc.Generation, strings.Join(conds, " "))
}

// waitReady waits until the cluster is Ready with replicas ready instances
// and its status describes the current generation.
func (e *env) waitReady(t testing.TB, ns, name string, replicas int32, timeout time.Duration) *pgv1.PostgresCluster {
	t.Helper()
	var pgc *pgv1.PostgresCluster
	e.waitFor(t, timeout, fmt.Sprintf("%s Ready with %d instances", name, replicas), func() (bool, string) {
		pgc = e.get(t, ns, name)
		ok := meta.IsStatusConditionTrue(pgc.Status.Conditions, pgv1.ConditionReady) &&
			pgc.Status.ReadyReplicas == replicas && pgc.Spec.Replicas == replicas &&
			pgc.Status.ObservedGeneration == pgc.Generation && pgc.Status.CurrentPrimary == pgc.Status.TargetPrimary
		return ok, describe(pgc)
	})
	return pgc
}

// waitCondition waits until condition typ has status and reason.
func (e *env) waitCondition(t testing.TB, ns, name, typ string, status metav1.ConditionStatus, reason string, timeout time.Duration) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	e.waitFor(t, timeout, fmt.Sprintf("%s %s=%s reason %s", name, typ, status, reason), func() (bool, string) {
		pgc := e.get(t, ns, name)
		c = meta.FindStatusCondition(pgc.Status.Conditions, typ)
		return c != nil && c.Status == status && c.Reason == reason, describe(pgc)
	})
	return c
}

// rolePods returns the names of the pods of cluster name labelled role.
func (e *env) rolePods(t testing.TB, ns, name, role string) []string {
	t.Helper()
	var pods corev1.PodList
	if err := e.cl.List(context.Background(), &pods, client.InNamespace(ns),
		client.MatchingLabels{pgv1.LabelCluster: name, pgv1.LabelRole: role}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			names = append(names, p.Name)
		}
	}
	return names
}

// endpoints returns the ready pods behind a Service, from its
// EndpointSlices.
func (e *env) endpoints(t testing.TB, ns, svc string) []string {
	t.Helper()
	var slices discoveryv1.EndpointSliceList
	if err := e.cl.List(context.Background(), &slices, client.InNamespace(ns),
		client.MatchingLabels{discoveryv1.LabelServiceName: svc}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range slices.Items {
		for _, ep := range s.Endpoints {
			if ep.TargetRef != nil && (ep.Conditions.Ready == nil || *ep.Conditions.Ready) {
				names = append(names, ep.TargetRef.Name)
			}
		}
	}
	return names
}

// events returns the reasons of the events about the cluster.
func (e *env) eventReasons(t testing.TB, ns, name string) map[string]int {
	t.Helper()
	evs, err := e.cs.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, ev := range evs.Items {
		if ev.Regarding.Kind == "PostgresCluster" && ev.Regarding.Name == name {
			got[ev.Reason]++
		}
	}
	return got
}

// primaryWatch watches the pods of a namespace and records every moment
// at which two pods were labelled primary at once, or two servers ran as
// primaries at once (a simulated server's role is in its pod's
// annotations; a pod being deleted has stopped its server).
type primaryWatch struct {
	mu         sync.Mutex
	primaries  map[string]bool
	servers    map[string]bool // pods whose server runs as a primary
	violations []string
	deletedAs  map[string]string // pod → role label when it started terminating
}

func (e *env) watchPrimaries(t testing.TB, ns string) *primaryWatch {
	t.Helper()
	pw := &primaryWatch{primaries: map[string]bool{}, servers: map[string]bool{}, deletedAs: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	list, err := e.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		pw.see(&list.Items[i], false)
	}
	w, err := e.cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				pw.see(pod, ev.Type == "DELETED")
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		w.Stop()
		<-done
	})
	return pw
}

func (pw *primaryWatch) see(pod *corev1.Pod, deleted bool) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	role := pod.Labels[pgv1.LabelRole]
	if (pod.DeletionTimestamp != nil || deleted) && pw.deletedAs[pod.Name] == "" {
		pw.deletedAs[pod.Name] = role + " "
	}
	pw.primaries[pod.Name] = role == pgv1.RolePrimary && !deleted
	pw.servers[pod.Name] = pod.Annotations[instance.AnnotationSimRole] == pgv1.RolePrimary && !deleted && pod.DeletionTimestamp == nil
	for what, set := range map[string]map[string]bool{"pods labelled primary": pw.primaries, "servers running as primary": pw.servers} {
		var ps []string
		for n, p := range set {
			if p {
				ps = append(ps, n)
			}
		}
		if len(ps) > 1 {
			slices.Sort(ps)
			pw.violations = append(pw.violations, fmt.Sprintf("at rv %s: %s %v", pod.ResourceVersion, what, ps))
		}
	}
}

// check fails the test if two primaries were ever seen.
func (pw *primaryWatch) check(t testing.TB) {
	t.Helper()
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if len(pw.violations) > 0 {
		t.Errorf("saw two primaries at once: %v", pw.violations)
	}
}

// roleWhenDeleted is the role label a pod had when it started terminating.
func (pw *primaryWatch) roleWhenDeleted(name string) (string, bool) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	r, ok := pw.deletedAs[name]
	return strings.TrimSpace(r), ok
}

// ownedObjects lists every object the operator makes for cluster name.
func ownedObjects(ns, name string) []client.Object {
	pgc := cluster(ns, name, 1)
	objs := []client.Object{
		specs.StatefulSet(pgc, 1), specs.Service(pgc, pgv1.RolePrimary), specs.Service(pgc, pgv1.RoleReplica),
		specs.HeadlessService(pgc), specs.Secret(pgc, ""), specs.ConfigMap(pgc), specs.PodDisruptionBudget(pgc),
	}
	pgc.Spec.Backup = &pgv1.BackupSpec{Schedule: "0 2 * * *"}
	objs = append(objs, specs.CronJob(pgc))
	for _, o := range objs {
		o.SetResourceVersion("")
	}
	return objs
}

// decode turns YAML into an object of scheme's types.
func decode(t testing.TB, s string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(s), into); err != nil {
		t.Fatalf("decode: %v", err)
	}
}
