// Package clustertest gives tests a real Kubernetes cluster of their own: an
// embedded control plane started from the binaries `make controlplane`
// builds, deleted when the test ends.
package clustertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"oplab.dev/oplab/internal/cluster"
)

// Cluster is a running embedded cluster owned by one test.
type Cluster struct {
	Provider   *cluster.Provider
	Name       string
	Kubeconfig string
	Config     *rest.Config
	Client     kubernetes.Interface
	// DataDir is the provider's data directory (the cluster's state is
	// under DataDir/clusters/Name).
	DataDir string
}

// SkipShort is the reason every helper here gives for skipping under
// `go test -short` (make test-short): the inner loop runs without the
// control plane, which takes minutes to build on a fresh machine.
const SkipShort = "needs the embedded control plane; -short"

// RequireControlPlane skips the test under -short. Every helper that starts
// or reads the embedded control plane calls it first, so a package's tests
// need no change to run in the inner loop; a test that reaches the control
// plane some other way calls it itself.
func RequireControlPlane(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip(SkipShort)
	}
}

// BinDir returns the directory of the control-plane binaries: $OPLAB_BIN, or
// bin/ at the root of the module. It skips the test under -short, and fails
// it, saying what to run, when the binaries are missing.
func BinDir(t testing.TB) string {
	t.Helper()
	RequireControlPlane(t)
	dir := os.Getenv("OPLAB_BIN")
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatalf("find the module root: %v", err)
		}
		dir = filepath.Join(root, "bin")
	}
	if _, err := os.Stat(filepath.Join(dir, "kube-controlplane")); err != nil {
		t.Fatalf("control-plane binaries not found in %s: run `make controlplane` (or `make test`)", dir)
	}
	return dir
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err == nil && strings.HasPrefix(string(data), "module oplab.dev/oplab\n") {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// NewProvider returns an embedded provider whose data directory is a
// temporary directory of the test.
func NewProvider(t testing.TB) (*cluster.Provider, string) {
	t.Helper()
	data := t.TempDir()
	p, err := cluster.NewProvider(cluster.ProviderWithEmbedded(BinDir(t), data))
	if err != nil {
		t.Fatalf("new provider: %v", err)
	}
	return p, data
}

// New creates a cluster for the test and deletes it when the test ends.
func New(t testing.TB) *Cluster {
	t.Helper()
	p, data := NewProvider(t)
	return Create(t, p, data, UniqueName("t"))
}

// Create makes cluster name with p and deletes it when the test ends.
func Create(t testing.TB, p *cluster.Provider, dataDir, name string, opts ...cluster.CreateOption) *Cluster {
	t.Helper()
	return create(t, p, dataDir, name, 3*time.Minute, opts...)
}

func create(t testing.TB, p *cluster.Provider, dataDir, name string, timeout time.Duration, opts ...cluster.CreateOption) *Cluster {
	t.Helper()
	// A provider made without NewProvider or NewKindProvider is skipped
	// here under -short, before anything is started.
	RequireControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	err := p.Create(ctx, name, opts...)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := p.Delete(ctx, name); err != nil && !isNotFound(err) {
			t.Errorf("delete cluster %s: %v", name, err)
		}
	})
	if err != nil {
		t.Fatalf("create cluster %s: %v", name, err)
	}
	t.Logf("cluster %s ready in %s", name, time.Since(start).Round(time.Millisecond))
	kc, err := p.KubeconfigPath(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.RESTConfig(name)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &Cluster{Provider: p, Name: name, Kubeconfig: kc, Config: cfg, Client: cs, DataDir: dataDir}
}

// Namespace makes namespace name in the cluster and waits for its default
// ServiceAccount: until the ServiceAccount controller has made it, the
// API server refuses pods in the namespace, and on a loaded machine that
// takes a moment.
func (c *Cluster) Namespace(t testing.TB, name string) {
	t.Helper()
	ctx := t.Context()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("namespace %s: its default ServiceAccount never came: %v", name, err)
	}
}

// UniqueName returns prefix with a random suffix, a valid cluster name.
func UniqueName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

func isNotFound(err error) bool {
	return errors.Is(err, cluster.ErrNotFound)
}
