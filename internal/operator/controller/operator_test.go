package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/operator/controller"
	"oplab.dev/oplab/internal/operator/instance"
	"oplab.dev/oplab/internal/operator/specs"
)

// TestOperator runs the operator against a real API server (an embedded
// cluster: etcd, kube-apiserver, kube-controller-manager, scheduler and
// KWOK playing the kubelet), one namespace and one operator per scenario.
func TestOperator(t *testing.T) {
	e := newEnv(t)
	scenarios := []struct {
		name string
		run  func(*testing.T, *env, string)
	}{
		{"three replicas ready", testThreeReplicas},
		{"invalid specs rejected", testInvalidSpecs},
		{"scale with switchover", testScale},
		{"failover", testFailover},
		{"running primary adopted", testAdoptRunningPrimary},
		{"forbidden then fixed", testForbidden},
		{"quota exceeded then raised", testQuota},
		{"missing storage class", testMissingStorageClass},
		{"deletion collects everything", testDeletion},
		{"the program: flags, probes, metrics, leader election", testProgram},
		{"failover waits for failoverDelay", testFailoverDelay},
		{"single instance restarts in place", testSingleInstance},
	}
	for i, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ns := e.namespace(t, "s"+string(rune('a'+i)))
			s.run(t, e, ns)
		})
	}
}

// courseExample is the YAML of the course, applied unchanged.
const courseExample = `
apiVersion: databases.example.com/v1
kind: PostgresCluster
metadata: {name: prod-db}
spec:
  replicas: 3
  version: "15"
  backup: {schedule: "0 2 * * *", retention: 7d}
  resources: {requests: {memory: "2Gi", cpu: "1"}}
`

func testThreeReplicas(t *testing.T, e *env, ns string) {
	ctx := context.Background()
	logs := e.operator(t, e.cfg, ns)
	var u unstructured.Unstructured
	decode(t, courseExample, &u.Object)
	u.SetNamespace(ns)
	if err := e.cl.Create(ctx, &u); err != nil {
		t.Fatalf("apply the course example: %v", err)
	}
	pgc := e.waitReady(t, ns, "prod-db", 3, 90*time.Second)

	if got := pgc.Status.InstanceControl; got != instance.ModeSimulated {
		t.Errorf("status.instanceControl: got %q, want simulated", got)
	}
	if pgc.Status.Phase != pgv1.PhaseHealthy {
		t.Errorf("phase: got %q, want Healthy", pgc.Status.Phase)
	}
	prim := e.rolePods(t, ns, "prod-db", pgv1.RolePrimary)
	if len(prim) != 1 || prim[0] != pgc.Status.CurrentPrimary {
		t.Errorf("pods labelled primary: got %v, want [%s]", prim, pgc.Status.CurrentPrimary)
	}
	if reps := e.rolePods(t, ns, "prod-db", pgv1.RoleReplica); len(reps) != 2 {
		t.Errorf("pods labelled replica: got %v, want 2", reps)
	}
	e.waitFor(t, 30*time.Second, "-rw and -ro endpoints", func() (bool, string) {
		rw, ro := e.endpoints(t, ns, "prod-db-rw"), e.endpoints(t, ns, "prod-db-ro")
		return slices.Equal(rw, prim) && len(ro) == 2 && !slices.Contains(ro, prim[0]), "rw=" + strings.Join(rw, ",") + " ro=" + strings.Join(ro, ",")
	})

	// Every owned object exists, is owned by the cluster and is right.
	for _, want := range ownedObjects(ns, "prod-db") {
		got := want.DeepCopyObject().(client.Object)
		if err := e.cl.Get(ctx, client.ObjectKeyFromObject(want), got); err != nil {
			t.Errorf("owned object %T %s: %v", want, want.GetName(), err)
			continue
		}
		if !metav1.IsControlledBy(got, pgc) {
			t.Errorf("%T %s: owner references %v, want the PostgresCluster as controller", got, got.GetName(), got.GetOwnerReferences())
		}
	}
	var secret corev1.Secret
	if err := e.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "prod-db-credentials"}, &secret); err != nil {
		t.Fatal(err)
	}
	password := string(secret.Data[specs.SecretKeyPassword])
	if len(password) < 16 {
		t.Errorf("secret password: got %d bytes, want a generated password", len(password))
	}
	if strings.Contains(logs.String(), password) {
		t.Errorf("the operator log contains the generated password")
	}
	var pods corev1.PodList
	if err := e.cl.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		c := p.Spec.Containers[0]
		if c.Image != "postgres:15" || !c.Resources.Requests.Memory().Equal(resource.MustParse("2Gi")) {
			t.Errorf("pod %s: image %s, memory request %s; want postgres:15 and 2Gi", p.Name, c.Image, c.Resources.Requests.Memory())
		}
	}

	// The scale subresource works as kubectl scale and an HPA use it.
	var scale autoscalingv1.Scale
	if err := e.cl.SubResource("scale").Get(ctx, pgc, &scale); err != nil {
		t.Fatalf("get scale: %v", err)
	}
	if scale.Spec.Replicas != 3 || scale.Status.Replicas != 3 || !strings.Contains(scale.Status.Selector, pgv1.LabelCluster+"=prod-db") {
		t.Errorf("scale: got spec %d status %d selector %q, want 3, 3 and the cluster's selector", scale.Spec.Replicas, scale.Status.Replicas, scale.Status.Selector)
	}

	// kubectl get pgc shows the printer columns.
	e.checkColumns(t, ns, "prod-db", pgc.Status.CurrentPrimary)

	// A reconcile of the unchanged cluster writes nothing. First let the
	// StatefulSet's status settle, which the operator reads.
	e.waitCondition(t, ns, "prod-db", pgv1.ConditionProgressing, metav1.ConditionFalse, pgv1.ReasonUpToDate, 30*time.Second)
	time.Sleep(time.Second)
	before := e.versions(t, ns, "prod-db")
	r := &controller.Reconciler{Client: e.cl, APIReader: e.cl, Instance: instance.NewSimulated(e.cl)}
	for range 2 {
		if _, err := r.Reconcile(log.IntoContext(ctx, logr.Discard()), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(pgc)}); err != nil {
			t.Fatalf("reconcile: %v", err)
		}
	}
	time.Sleep(2 * time.Second) // and the running operator did not write either
	after := e.versions(t, ns, "prod-db")
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s: resourceVersion %s → %s after reconciling an unchanged cluster, want unchanged", k, v, after[k])
		}
	}

	// Removing spec.backup removes the CronJob.
	pgc = e.get(t, ns, "prod-db")
	patch := client.MergeFrom(pgc.DeepCopy())
	pgc.Spec.Backup = nil
	if err := e.cl.Patch(ctx, pgc, patch); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, 30*time.Second, "backup CronJob removed", func() (bool, string) {
		err := e.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "prod-db-backup"}, &batchv1.CronJob{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	})
	e.waitReady(t, ns, "prod-db", 3, 30*time.Second)
}

// checkColumns reads the cluster as kubectl get does (a server-side Table)
// and checks the printer columns.
func (e *env) checkColumns(t testing.TB, ns, name, primary string) {
	t.Helper()
	raw, err := e.cs.Discovery().RESTClient().Get().
		AbsPath("/apis/databases.example.com/v1/namespaces", ns, "postgresclusters", name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		DoRaw(context.Background())
	if err != nil {
		t.Fatalf("get table: %v", err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range table.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if want := []string{"Name", "Replicas", "Ready", "Primary", "Phase", "Age"}; !slices.Equal(cols, want) {
		t.Errorf("columns: got %v, want %v", cols, want)
	}
	if len(table.Rows) != 1 || fmt.Sprint(table.Rows[0].Cells[1:5]) != fmt.Sprintf("[3 3 %s Healthy]", primary) {
		t.Errorf("row: got %v, want 3, 3, %s, Healthy", table.Rows, primary)
	}
}

// versions maps every object of the cluster (the PostgresCluster, the owned
// objects, the pods) to its resourceVersion.
func (e *env) versions(t testing.TB, ns, name string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{"PostgresCluster": e.get(t, ns, name).ResourceVersion}
	for _, o := range ownedObjects(ns, name) {
		if err := e.cl.Get(ctx, client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		out[typeOf(o)+"/"+o.GetName()] = o.GetResourceVersion()
	}
	var pods corev1.PodList
	if err := e.cl.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		out["Pod/"+p.Name] = p.ResourceVersion
	}
	return out
}

func typeOf(o any) string { return reflect.TypeOf(o).Elem().Name() }

func testInvalidSpecs(t *testing.T, e *env, ns string) {
	tests := []struct {
		name  string
		spec  map[string]any
		field string
	}{
		{"zero replicas", map[string]any{"replicas": 0, "version": "15"}, "spec.replicas"},
		{"eleven replicas", map[string]any{"replicas": 11, "version": "15"}, "spec.replicas"},
		{"missing replicas", map[string]any{"version": "15"}, "spec.replicas"},
		{"missing version", map[string]any{"replicas": 1}, "spec.version"},
		{"bad cron", map[string]any{"replicas": 1, "version": "15", "backup": map[string]any{"schedule": "every night"}}, "spec.backup.schedule"},
		{"six-field cron", map[string]any{"replicas": 1, "version": "15", "backup": map[string]any{"schedule": "0 0 2 * * *"}}, "spec.backup.schedule"},
		{"bad retention", map[string]any{"replicas": 1, "version": "15", "backup": map[string]any{"schedule": "0 2 * * *", "retention": "7 days"}}, "spec.backup.retention"},
		{"negative failoverDelay", map[string]any{"replicas": 1, "version": "15", "failoverDelay": -1}, "spec.failoverDelay"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "databases.example.com/v1", "kind": "PostgresCluster",
				"metadata": map[string]any{"name": "bad-" + string(rune('a'+i)), "namespace": ns},
				"spec":     tt.spec,
			}}
			err := e.cl.Create(context.Background(), u)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("got %v, want an Invalid error", err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name the field %s", err, tt.field)
			}
		})
	}
}

func testScale(t *testing.T, e *env, ns string) {
	ctx := context.Background()
	e.operator(t, e.cfg, ns)
	pw := e.watchPrimaries(t, ns)
	pgc := cluster(ns, "db", 1)
	if err := e.cl.Create(ctx, pgc); err != nil {
		t.Fatal(err)
	}
	pgc = e.waitReady(t, ns, "db", 1, 90*time.Second)
	if pgc.Status.CurrentPrimary != "db-0" {
		t.Fatalf("first primary: got %q, want db-0", pgc.Status.CurrentPrimary)
	}
	e.scale(t, pgc, 3)
	e.waitReady(t, ns, "db", 3, 90*time.Second)

	// A manual switchover to the highest ordinal, by annotation.
	patch := client.MergeFrom(pgc.DeepCopy())
	pgc.Annotations = map[string]string{pgv1.AnnotationSwitchoverTo: "db-2"}
	if err := e.cl.Patch(ctx, pgc, patch); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, 30*time.Second, "switchover to db-2", func() (bool, string) {
		pgc = e.get(t, ns, "db")
		_, annotated := pgc.Annotations[pgv1.AnnotationSwitchoverTo]
		prim := e.rolePods(t, ns, "db", pgv1.RolePrimary)
		return pgc.Status.CurrentPrimary == "db-2" && !annotated && slices.Equal(prim, []string{"db-2"}), describe(pgc)
	})

	// Scaling to 2 would remove db-2, the primary: the operator switches
	// over first, and db-2 is a replica when its pod goes.
	e.scale(t, pgc, 2)
	pgc = e.waitReady(t, ns, "db", 2, 90*time.Second)
	if cur := pgc.Status.CurrentPrimary; cur != "db-0" && cur != "db-1" {
		t.Errorf("primary after scale-down: got %q, want db-0 or db-1", cur)
	}
	e.waitFor(t, 30*time.Second, "db-2 removed", func() (bool, string) {
		err := e.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-2"}, &corev1.Pod{})
		return apierrors.IsNotFound(err), "db-2 still exists"
	})
	if role, ok := pw.roleWhenDeleted("db-2"); !ok || role == pgv1.RolePrimary {
		t.Errorf("db-2 when deleted: role %q (seen=%v), want a non-primary role", role, ok)
	}
	if n := e.eventReasons(t, ns, "db")["SwitchoverComplete"]; n < 2 {
		t.Errorf("SwitchoverComplete events: got %d, want 2", n)
	}
	pw.check(t)
}

func (e *env) scale(t testing.TB, pgc *pgv1.PostgresCluster, n int32) {
	t.Helper()
	scale := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Namespace: pgc.Namespace, Name: pgc.Name},
		Spec:       autoscalingv1.ScaleSpec{Replicas: n},
	}
	if err := e.cl.SubResource("scale").Update(context.Background(), pgc, client.WithSubResourceBody(scale)); err != nil {
		t.Fatalf("scale to %d: %v", n, err)
	}
}

func testFailover(t *testing.T, e *env, ns string) {
	ctx := context.Background()
	e.operator(t, e.cfg, ns)
	pw := e.watchPrimaries(t, ns)
	if err := e.cl.Create(ctx, cluster(ns, "db", 3)); err != nil {
		t.Fatal(err)
	}
	pgc := e.waitReady(t, ns, "db", 3, 90*time.Second)
	old := pgc.Status.CurrentPrimary
	if err := e.cl.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: old}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var newPrimary string
	e.waitFor(t, 30*time.Second, "a new primary behind -rw", func() (bool, string) {
		pgc = e.get(t, ns, "db")
		rw := e.endpoints(t, ns, "db-rw")
		newPrimary = pgc.Status.CurrentPrimary
		return newPrimary != old && slices.Equal(rw, []string{newPrimary}), "rw=" + strings.Join(rw, ",") + " " + describe(pgc)
	})
	t.Logf("failover: %s → %s behind db-rw in %s", old, newPrimary, time.Since(start).Round(time.Millisecond))
	// The recreated pod of the old primary rejoins as a replica.
	e.waitReady(t, ns, "db", 3, 60*time.Second)
	e.waitFor(t, 30*time.Second, old+" rejoins as replica", func() (bool, string) {
		var pod corev1.Pod
		if err := e.cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: old}, &pod); err != nil {
			return false, err.Error()
		}
		return pod.Labels[pgv1.LabelRole] == pgv1.RoleReplica && pod.Annotations[instance.AnnotationSimUpstream] == newPrimary,
			"role=" + pod.Labels[pgv1.LabelRole] + " upstream=" + pod.Annotations[instance.AnnotationSimUpstream]
	})
	reasons := e.eventReasons(t, ns, "db")
	for _, r := range []string{"FailingOver", "FailoverTarget", "FailoverComplete"} {
		if reasons[r] == 0 {
			t.Errorf("no %s event; got %v", r, reasons)
		}
	}
	if got := metricValue(t, "pg_operator_failovers_total", ns); got != 1 {
		t.Errorf("pg_operator_failovers_total{namespace=%q}: got %v, want 1", ns, got)
	}
	pw.check(t)
}

// metricValue reads a counter or gauge of namespace ns from the
// controller-runtime registry the operator exports on /metrics.
func metricValue(t testing.TB, name, ns string) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "namespace" && l.GetValue() == ns {
					if m.GetCounter() != nil {
						return m.GetCounter().GetValue()
					}
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

func testMissingStorageClass(t *testing.T, e *env, ns string) {
	e.operator(t, e.cfg, ns)
	pgc := cluster(ns, "db", 1, func(p *pgv1.PostgresCluster) {
		p.Spec.Storage.StorageClassName = ptr.To("no-such-class")
	})
	if err := e.cl.Create(context.Background(), pgc); err != nil {
		t.Fatal(err)
	}
	c := e.waitCondition(t, ns, "db", pgv1.ConditionProgressing, metav1.ConditionFalse, pgv1.ReasonStorageClassNotFound, 60*time.Second)
	if !strings.Contains(c.Message, `"no-such-class"`) || !strings.Contains(c.Message, "does not exist") {
		t.Errorf("condition message %q does not name the missing StorageClass", c.Message)
	}
	if got := e.get(t, ns, "db"); meta.IsStatusConditionTrue(got.Status.Conditions, pgv1.ConditionReady) {
		t.Errorf("Ready is True with no volume: %s", describe(got))
	}
}

func testDeletion(t *testing.T, e *env, ns string) {
	ctx := context.Background()
	e.operator(t, e.cfg, ns)
	pgc := cluster(ns, "db", 2, func(p *pgv1.PostgresCluster) {
		p.Spec.Backup = &pgv1.BackupSpec{Schedule: "0 2 * * *"}
	})
	if err := e.cl.Create(ctx, pgc); err != nil {
		t.Fatal(err)
	}
	e.waitReady(t, ns, "db", 2, 90*time.Second)
	if err := e.cl.Delete(ctx, pgc); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, 60*time.Second, "owned objects garbage-collected", func() (bool, string) {
		var left []string
		for _, o := range ownedObjects(ns, "db") {
			if err := e.cl.Get(ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
				left = append(left, typeOf(o)+"/"+o.GetName())
			}
		}
		var pods corev1.PodList
		if err := e.cl.List(ctx, &pods, client.InNamespace(ns)); err == nil {
			for _, p := range pods.Items {
				left = append(left, "Pod/"+p.Name)
			}
		}
		return len(left) == 0, "left: " + strings.Join(left, ", ")
	})
}

func testFailoverDelay(t *testing.T, e *env, ns string) {
	ctx := context.Background()
	e.operator(t, e.cfg, ns)
	const delay = 4
	if err := e.cl.Create(ctx, cluster(ns, "db", 2, func(p *pgv1.PostgresCluster) { p.Spec.FailoverDelay = delay })); err != nil {
		t.Fatal(err)
	}
	pgc := e.waitReady(t, ns, "db", 2, 90*time.Second)
	old := pgc.Status.CurrentPrimary
	if err := e.cl.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: old}}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	c := e.waitCondition(t, ns, "db", pgv1.ConditionPrimaryAvailable, metav1.ConditionFalse, pgv1.ReasonPrimaryNotReady, 10*time.Second)
	t.Logf("primary unavailable: %s", c.Message)
	for time.Since(start) < (delay-1)*time.Second {
		if got := e.get(t, ns, "db").Status.CurrentPrimary; got != old {
			t.Fatalf("failed over to %s after %s, before failoverDelay %ds", got, time.Since(start).Round(time.Millisecond), delay)
		}
		time.Sleep(200 * time.Millisecond)
	}
	e.waitFor(t, 20*time.Second, "failover after the delay", func() (bool, string) {
		pgc = e.get(t, ns, "db")
		return pgc.Status.CurrentPrimary != old && pgc.Status.CurrentPrimary != "", describe(pgc)
	})
	if took := time.Since(start); took < delay*time.Second {
		t.Errorf("failed over %s after the deletion, want at least %ds", took.Round(time.Millisecond), delay)
	}
}

// testAdoptRunningPrimary: a status edited by hand names a replica as the
// primary. The servers are the truth: the operator records the server
// that runs as the primary again, with no failover (nothing promoted, no
// pod stopped).
func testAdoptRunningPrimary(t *testing.T, e *env, ns string) {
	ctx := context.Background()
	e.operator(t, e.cfg, ns)
	pw := e.watchPrimaries(t, ns)
	if err := e.cl.Create(ctx, cluster(ns, "db", 3, func(p *pgv1.PostgresCluster) { p.Spec.FailoverDelay = 1 })); err != nil {
		t.Fatal(err)
	}
	pgc := e.waitReady(t, ns, "db", 3, 90*time.Second)
	if pgc.Status.CurrentPrimary != "db-0" {
		t.Fatalf("first primary: got %q, want db-0", pgc.Status.CurrentPrimary)
	}
	uid := e.podUID(t, ns, "db-0")
	edit := client.MergeFrom(pgc.DeepCopy())
	pgc.Status.CurrentPrimary, pgc.Status.TargetPrimary = "db-1", "db-1"
	if err := e.cl.Status().Patch(ctx, pgc, edit); err != nil {
		t.Fatal(err)
	}
	// Status changes do not start a pass; a pod change does.
	poke := []byte(`{"metadata":{"annotations":{"test.oplab.dev/poke":"1"}}}`)
	if _, err := e.cs.CoreV1().Pods(ns).Patch(ctx, "db-2", types.MergePatchType, poke, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, 30*time.Second, "db-0 recorded as the primary again", func() (bool, string) {
		pgc = e.get(t, ns, "db")
		return pgc.Status.CurrentPrimary == "db-0" && pgc.Status.TargetPrimary == "db-0", describe(pgc)
	})
	time.Sleep(2 * time.Second) // past failoverDelay: a failover would have started
	reasons := e.eventReasons(t, ns, "db")
	if reasons["PrimaryAdopted"] == 0 || reasons["FailingOver"] > 0 {
		t.Errorf("events %v, want PrimaryAdopted and no FailingOver", reasons)
	}
	if got := e.podUID(t, ns, "db-0"); got != uid {
		t.Errorf("db-0 was recreated (uid %s → %s), want it left running", uid, got)
	}
	if pgc = e.get(t, ns, "db"); pgc.Status.CurrentPrimary != "db-0" {
		t.Errorf("primary after the adoption: %s", describe(pgc))
	}
	pw.check(t)
}

func testSingleInstance(t *testing.T, e *env, ns string) {
	ctx := context.Background()
	e.operator(t, e.cfg, ns)
	pw := e.watchPrimaries(t, ns)
	if err := e.cl.Create(ctx, cluster(ns, "db", 1)); err != nil {
		t.Fatal(err)
	}
	pgc := e.waitReady(t, ns, "db", 1, 90*time.Second)
	uid := e.podUID(t, ns, "db-0")
	if err := e.cl.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-0"}}); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, 60*time.Second, "db-0 recreated and primary again", func() (bool, string) {
		pgc = e.get(t, ns, "db")
		prim := e.rolePods(t, ns, "db", pgv1.RolePrimary)
		return e.podUID(t, ns, "db-0") != uid && slices.Equal(prim, []string{"db-0"}) &&
			meta.IsStatusConditionTrue(pgc.Status.Conditions, pgv1.ConditionReady), describe(pgc)
	})
	if n := e.eventReasons(t, ns, "db")["PrimaryRestarted"]; n == 0 {
		t.Errorf("no PrimaryRestarted event")
	}
	pw.check(t)
}

func (e *env) podUID(t testing.TB, ns, name string) string {
	t.Helper()
	var pod corev1.Pod
	if err := e.cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &pod); err != nil {
		return ""
	}
	return string(pod.UID)
}
