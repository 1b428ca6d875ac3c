// Package charttest installs oplab's chart on a kind host for tests, as a
// platform team would: objects created from the rendered chart, images
// loaded into the node, no registry.
package charttest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"oplab.dev/oplab/charts"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/operator/install"
)

// The release Install makes.
const (
	Release    = "lab"
	Namespace  = "oplab"
	Deployment = "lab-oplab"
	// ServerSelector selects the release's server pods.
	ServerSelector = "app.kubernetes.io/component=server,app.kubernetes.io/instance=lab"
)

// Render renders the chart as Install does, with vals.
func Render(t testing.TB, vals map[string]any) ([]install.Manifest, error) {
	t.Helper()
	c, err := install.LoadChart(charts.Oplab())
	if err != nil {
		t.Fatal(err)
	}
	return install.Render(c, Release, Namespace, vals)
}

// Install loads oplab's and PostgreSQL's images into host, creates the
// chart's objects rendered with vals (namespaces first) and waits until
// the server's replicas are ready; it returns how long that took.
func Install(t testing.TB, ctx context.Context, host *clustertest.Cluster, vals map[string]any) time.Duration {
	t.Helper()
	if err := host.Provider.LoadImages(ctx, host.Name, cluster.DefaultPodsImage, install.PostgresImage); err != nil {
		t.Fatalf("load the images (make images builds them): %v", err)
	}
	if _, err := host.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ms, err := Render(t, vals)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(host.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(host.Client.Discovery()))
	for _, first := range []bool{true, false} {
		for _, m := range ms {
			if (m.Kind == "Namespace") != first {
				continue
			}
			u := &unstructured.Unstructured{Object: m.Object}
			mapping, err := mapper.RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
			if err != nil {
				t.Fatalf("%s %s: %v", m.Kind, m.Name, err)
			}
			var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
			if u.GetNamespace() != "" {
				ri = dyn.Resource(mapping.Resource).Namespace(u.GetNamespace())
			}
			if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("create %s %s: %v", m.Kind, m.Name, err)
			}
		}
	}
	start := time.Now()
	want := int32(2)
	if n, ok := vals["replicaCount"].(int); ok {
		want = int32(n)
	}
	var last string
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := host.Client.AppsV1().Deployments(Namespace).Get(ctx, Deployment, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = d.Status.String()
		return d.Status.ReadyReplicas == want, nil
	}); err != nil {
		t.Fatalf("%d server replicas ready: %v; last: %s", want, err, last)
	}
	return time.Since(start)
}
