package clustertest

import (
	"os"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
)

// KindGate is the variable that turns the kind tests on; `make test-kind`
// sets it after preparing an engine and the images.
const KindGate = "OPLAB_KIND_TEST"

// NewKindProvider returns a kind provider with a temporary data directory,
// using the node image and base config of $OPLAB_KIND_NODE_IMAGE and
// $OPLAB_KIND_CONFIG (as `make kind-env` prints them). It skips the test,
// saying why, unless $OPLAB_KIND_TEST=1: kind tests need a container
// engine and a node image, which `make test` does not prepare.
func NewKindProvider(t testing.TB) (*cluster.Provider, string) {
	t.Helper()
	if os.Getenv(KindGate) != "1" {
		t.Skipf("kind tests skipped: they need a container engine and a node image; run `make test-kind` (or set %s=1 after `eval \"$(make -s kind-env)\"` and `make images`)", KindGate)
	}
	data := t.TempDir()
	p, err := cluster.NewProvider(cluster.ProviderWithKind(cluster.KindOptions{
		DataDir:    data,
		NodeImage:  os.Getenv("OPLAB_KIND_NODE_IMAGE"),
		ConfigPath: os.Getenv("OPLAB_KIND_CONFIG"),
	}))
	if err != nil {
		t.Fatalf("new kind provider: %v", err)
	}
	return p, data
}

// NewKind creates a kind cluster for the test, deleted when the test ends.
func NewKind(t testing.TB, opts ...cluster.CreateOption) *Cluster {
	t.Helper()
	p, data := NewKindProvider(t)
	return create(t, p, data, UniqueName("t"), 8*time.Minute, opts...)
}
