package cluster_test

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/auth/rbac/validation"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestSeed starts from an empty cache: two clusters created at once both
// work and leave one seed behind, a third does not make another, and a
// cluster started from the seed is its own — only its CA is trusted, its
// kubernetes Service points at its API server — with the bootstrap objects
// and default ServiceAccounts in place; started again, it puts right what
// was changed of its bootstrap RBAC policy.
func TestSeed(t *testing.T) {
	cache, data := t.TempDir(), t.TempDir()
	p, err := cluster.NewProvider(cluster.ProviderWithEmbeddedOptions(cluster.EmbeddedOptions{
		BinDir: clustertest.BinDir(t), DataDir: data, CacheDir: cache,
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var seedsMade atomic.Int32
	create := func(name string) error {
		t.Cleanup(func() {
			if err := p.Delete(context.Background(), name); err != nil && !errors.Is(err, cluster.ErrNotFound) {
				t.Errorf("delete %s: %v", name, err)
			}
		})
		return p.Create(ctx, name, cluster.CreateWithProgress(func(s cluster.Step) {
			if s.Done && s.Err == nil && strings.HasPrefix(s.Name, "Making the cluster seed") {
				seedsMade.Add(1)
			}
		}))
	}

	names := []string{clustertest.UniqueName("a"), clustertest.UniqueName("b")}
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { errs[i] = create(name) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("create %s on an empty cache: %v", names[i], err)
		}
	}
	if n := seedsMade.Load(); n < 1 {
		t.Fatalf("no seed made on an empty cache")
	}
	entries, err := os.ReadDir(filepath.Join(cache, "etcd-seeds"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || strings.HasPrefix(entries[0].Name(), ".") {
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		t.Fatalf("seeds after two concurrent creates: %v, want one complete seed", got)
	}

	seedsMade.Store(0)
	c := clustertest.UniqueName("c")
	if err := create(c); err != nil {
		t.Fatal(err)
	}
	if n := seedsMade.Load(); n != 0 {
		t.Errorf("third create made a seed again")
	}
	cfg, err := p.RESTConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Started from the seed, the API server takes the bootstrap RBAC
	// policy as the seed holds it; started again from its own directory,
	// it reads and reconciles every object, as upstream does.
	if n := clusterRoleGets(ctx, t, cs); n > 5 {
		t.Errorf("a cluster started from the seed read %v ClusterRoles, want none of the bootstrap hook's", n)
	}

	// The API server adds its client CA to those the ConfigMap already
	// lists; a seed made with a CA would leave that one trusted here.
	var cas []byte
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		cm, err := cs.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, "extension-apiserver-authentication", metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		cas = []byte(cm.Data["client-ca-file"])
		return len(cas) > 0, nil
	})
	if err != nil {
		t.Fatalf("client-ca-file never written: %v", err)
	}
	if got, want := pemBlocks(cas), pemBlocks(cfg.TLSClientConfig.CAData); len(got) != 1 || len(want) != 1 || !bytes.Equal(got[0], want[0]) {
		t.Errorf("cluster trusts %d client CAs, want exactly its own", len(got))
	}

	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strconv.Itoa(svc.Spec.Ports[0].TargetPort.IntValue()); got != u.Port() {
		t.Errorf("kubernetes Service targets port %s, want the API server's %s", got, u.Port())
	}

	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		if _, err := cs.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			t.Errorf("ServiceAccount %s/default: %v", ns, err)
		}
	}
	for _, name := range []string{"cluster-admin", "admin", "system:controller:statefulset-controller"} {
		if _, err := cs.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("bootstrap ClusterRole %s: %v", name, err)
		}
	}
	if _, err := cs.StorageV1().StorageClasses().Get(ctx, "standard", metav1.GetOptions{}); err != nil {
		t.Errorf("default StorageClass: %v", err)
	}

	// Started again from its own directory, the API server puts its
	// bootstrap policy right, as upstream does at every start: a rule taken
	// from a controller's role is back, a binding deleted is made again.
	const role = "system:controller:statefulset-controller"
	cr, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rules := cr.Rules
	cr.Rules = cr.Rules[:1]
	if _, err := cs.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.RbacV1().ClusterRoleBindings().Delete(ctx, role, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx, c); err != nil {
		t.Fatal(err)
	}
	if cr, err := cs.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if covers, missing := validation.Covers(cr.Rules, rules); !covers {
		t.Errorf("started again: ClusterRole %s lacks %v, want its rules put back", role, missing)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, role, metav1.GetOptions{}); err != nil {
		t.Errorf("started again: ClusterRoleBinding %s: %v, want it made again", role, err)
	}
}

// clusterRoleGets is how many GETs of ClusterRoles the API server of cs
// has served since it started, by its apiserver_request_total.
func clusterRoleGets(ctx context.Context, t *testing.T, cs kubernetes.Interface) float64 {
	t.Helper()
	data, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `resource="clusterroles"`) || !strings.Contains(line, `verb="GET"`) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		n += v
	}
	return n
}

// pemBlocks returns the DER bytes of each PEM block in data.
func pemBlocks(data []byte) [][]byte {
	var out [][]byte
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return out
		}
		out = append(out, b.Bytes)
	}
}
