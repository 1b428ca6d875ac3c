package clusterview

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/operator/thirdparty"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// TestWatcherZalando watches a Zalando postgresql on a real API server:
// its CRD from the operator's own chart, the resource, and pods labelled
// as Patroni labels them. The view shows the resource's status and size,
// the pods' roles in the view's words, and who leads: what the page draws
// for a third-party operator's lab. (The operator and Patroni themselves
// run on kind: see internal/operator/thirdparty.)
func TestWatcherZalando(t *testing.T) {
	c := clustertest.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	bin := t.TempDir()
	if err := thirdparty.Zalando.Extract(bin); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	create := func(gvr schema.GroupVersionResource, ns, doc string) {
		t.Helper()
		var u unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatal(err)
		}
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, &u, metav1.CreateOptions{})
			return err == nil || apierrors.IsAlreadyExists(err), nil // a CRD is served a moment after it is made
		})
		if err != nil {
			t.Fatalf("create %s: %v", u.GetName(), err)
		}
	}
	crd, err := os.ReadFile(filepath.Join(thirdparty.Zalando.ChartDir(bin), "crds", "postgresqls.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	create(crdGVR, "", string(crd))
	create(Zalando.Resource, "default", `apiVersion: acid.zalan.do/v1
kind: postgresql
metadata: {name: my-postgres-cluster}
spec:
  teamId: platform
  volume: {size: 1Gi}
  numberOfInstances: 2
  postgresql: {version: "15"}
`)
	for name, role := range map[string]string{"my-postgres-cluster-0": "master", "my-postgres-cluster-1": "replica"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default",
			Labels: map[string]string{"application": "spilo", "cluster-name": "my-postgres-cluster", "spilo-role": role}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "postgres", Image: "oplab.local/spilo:15"}}}}
		if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	r := watch(t, ctx, &Watcher{Config: c.Config, Namespace: "default", Name: "my-postgres-cluster", Kind: &Zalando})
	v := r.wait("both pods ready, the master leading", func(v View) bool {
		return v.Cluster != nil && v.Cluster.ReadyReplicas == 2 && v.Cluster.CurrentPrimary == "my-postgres-cluster-0"
	})
	if v.Cluster.Replicas != 2 {
		t.Errorf("the view's size: got %d, want numberOfInstances 2", v.Cluster.Replicas)
	}
	roles := map[string]string{}
	for _, p := range v.Pods {
		roles[p.Name] = p.Role
	}
	if roles["my-postgres-cluster-0"] != pgv1.RolePrimary || roles["my-postgres-cluster-1"] != pgv1.RoleReplica {
		t.Errorf("pods' roles: got %v, want master as %s and replica as %s", roles, pgv1.RolePrimary, pgv1.RoleReplica)
	}
}
