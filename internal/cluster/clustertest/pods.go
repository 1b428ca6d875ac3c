package clustertest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/cluster"
)

// PodsNamespace is where the tests' pods providers keep the cells.
const PodsNamespace = "oplab-cells"

// NewPodsProvider makes a kind cluster to host learners' control planes
// (gated as NewKind is), loads oplab's image into it, and returns a pods
// provider on it that reaches the cells by port forward, closed when the
// test ends, with the host cluster and the provider's data directory.
func NewPodsProvider(t testing.TB) (p *cluster.Provider, host *Cluster, dataDir string) {
	t.Helper()
	host = NewKind(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	if err := host.Provider.LoadImages(ctx, host.Name, cluster.DefaultPodsImage); err != nil {
		t.Fatalf("load %s (make images builds it): %v", cluster.DefaultPodsImage, err)
	}
	t.Logf("%s loaded into the host in %s", cluster.DefaultPodsImage, time.Since(start).Round(time.Millisecond))
	if _, err := host.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: PodsNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dataDir = t.TempDir()
	p, err := cluster.NewProvider(cluster.ProviderWithPods(cluster.PodsOptions{
		Config: host.Config, Namespace: PodsNamespace, Image: cluster.DefaultPodsImage,
		DataDir: dataDir, Reach: cluster.PodsReachPortForward,
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, host, dataDir
}

// CreatePods makes cluster name with a pods provider and deletes it when
// the test ends.
func CreatePods(t testing.TB, p *cluster.Provider, dataDir, name string) *Cluster {
	t.Helper()
	return create(t, p, dataDir, name, 10*time.Minute)
}
