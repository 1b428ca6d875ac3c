package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// The providers' settings reach the provider from Config alone: the
// environment holds other values, which nothing below the CLI reads.
func TestNewProviderTakesConfig(t *testing.T) {
	t.Setenv("OPLAB_PPROF", "")
	t.Setenv(PodsKubeconfigEnv, filepath.Join(t.TempDir(), "from-the-environment"))
	dir := t.TempDir()
	p, err := NewProvider(Config{DataDir: dir, BinDir: dir, Profiling: true})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Profiling() {
		t.Error("Config.Profiling: got an embedded provider without profiling, want one with")
	}
	missing := filepath.Join(t.TempDir(), "from-the-config")
	_, err = NewProvider(Config{DataDir: dir, Provider: Pods, Pods: PodsHost{Kubeconfig: missing}})
	if err == nil || !strings.Contains(err.Error(), "from-the-config") {
		t.Errorf("Config.Pods.Kubeconfig %s: got %v, want an error reading it", missing, err)
	}
}

// The store is the SQLite file in the data directory unless Config names
// another, whatever the environment says.
func TestStoreFromConfigOnly(t *testing.T) {
	t.Setenv("OPLAB_STORE_URL", "postgres://nowhere.invalid/oplab")
	st, err := openStore(context.Background(), Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("got %v, want the SQLite store", err)
	}
	st.Close()
}
