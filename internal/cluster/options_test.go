package cluster_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/cluster"
)

// Profiling is asked for by the options, not found in the environment:
// the embedded backend serves profiles when Options.Profiling says so
// (and then the operator's host process does too), never on kind, whose
// clusters have no host processes.
func TestProviderByNameProfiling(t *testing.T) {
	t.Setenv("OPLAB_PPROF", "1") // read by nothing below the CLI
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		on   bool
		want bool
	}{
		{cluster.ProviderEmbedded, true, true},
		{cluster.ProviderEmbedded, false, false},
		{cluster.ProviderKind, true, false},
	} {
		p, err := cluster.NewProvider(cluster.ProviderByName(tt.name, cluster.Options{BinDir: dir, DataDir: dir, Profiling: tt.on}))
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Profiling(); got != tt.want {
			t.Errorf("%s with Profiling %v: got Profiling() %v, want %v", tt.name, tt.on, got, tt.want)
		}
	}
}

// PodsFrom fills what PodsHost leaves empty with the documented defaults
// and keeps what it names; a host cluster it cannot load is an error that
// says which variable names one.
func TestPodsFrom(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: host, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: admin, user: {token: t}}]
contexts: [{name: host, context: {cluster: host, user: admin}}]
current-context: host
`
	if err := os.WriteFile(kc, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := cluster.PodsFrom(cluster.PodsHost{Kubeconfig: kc}, "/data")
	if err != nil {
		t.Fatal(err)
	}
	if o.Config.Host != "https://127.0.0.1:6443" || o.Namespace != cluster.DefaultPodsNamespace || o.Image != cluster.DefaultPodsImage || o.DataDir != "/data" || o.StorageClass != "" || o.Reach != "" {
		t.Errorf("defaults: got host %s, namespace %q, image %q, data %q, class %q, reach %q; want the kubeconfig's server, %s, %s, /data and the rest empty",
			o.Config.Host, o.Namespace, o.Image, o.DataDir, o.StorageClass, o.Reach, cluster.DefaultPodsNamespace, cluster.DefaultPodsImage)
	}
	h := cluster.PodsHost{Kubeconfig: kc, Namespace: "cells", Image: "oplab:2", StorageClass: "fast", Reach: cluster.PodsReachService}
	if o, err = cluster.PodsFrom(h, "/data"); err != nil {
		t.Fatal(err)
	}
	if o.Namespace != h.Namespace || o.Image != h.Image || o.StorageClass != h.StorageClass || o.Reach != h.Reach {
		t.Errorf("got namespace %q, image %q, class %q, reach %q; want %+v's", o.Namespace, o.Image, o.StorageClass, o.Reach, h)
	}
	_, err = cluster.PodsFrom(cluster.PodsHost{Kubeconfig: filepath.Join(t.TempDir(), "none")}, "/data")
	if err == nil || !strings.Contains(err.Error(), cluster.PodsKubeconfigEnv) {
		t.Errorf("a missing kubeconfig: got %v, want an error naming %s", err, cluster.PodsKubeconfigEnv)
	}
}
