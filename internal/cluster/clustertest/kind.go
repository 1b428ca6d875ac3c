package clustertest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
)

// KindGate is the variable that turns the kind tests on; `make test` and
// `make test-kind` set it after preparing an engine and the images.
const KindGate = "OPLAB_KIND_TEST"

// KindSlowGate turns on, besides KindGate, the kind tests that take many
// minutes (every lab's self-test); only `make test-kind` sets it.
const KindSlowGate = "OPLAB_KIND_SLOW"

// SkipKindShort is why the kind tests skip under `go test -short`, even
// with KindGate set: the inner loop starts no container.
const SkipKindShort = "needs a kind cluster; -short"

// kindSkipReason is set by hack/kind/test-env.sh when no container engine
// can run here, to say why the kind tests are skipped.
const kindSkipReason = "OPLAB_KIND_SKIP"

// NewKindProvider returns a kind provider with a temporary data directory,
// the base config of $OPLAB_KIND_CONFIG (as `make kind-env` prints it) and
// the node image of $OPLAB_KIND_NODE_IMAGE, or when unset (as in `make
// test-kind`) the one the provider picks: the image `make images` built.
// It skips the test, saying why, under -short and unless $OPLAB_KIND_TEST=1:
// kind tests need a container engine and a node image, which `make
// test-kind` prepares where it can.
func NewKindProvider(t testing.TB) (*cluster.Provider, string) {
	t.Helper()
	if testing.Short() {
		t.Skip(SkipKindShort)
	}
	if os.Getenv(KindGate) != "1" {
		if why := os.Getenv(kindSkipReason); why != "" {
			t.Skipf("kind tests skipped: %s", why)
		}
		t.Skipf("kind tests skipped: they need a container engine and a node image; run `make test-kind` (or set %s=1 after `eval \"$(make -s kind-env)\"` and `make images`)", KindGate)
	}
	data := t.TempDir()
	nodeImage, config := KindEnv()
	// The nodes bind oplab's bin directory, as `oplab serve --provider
	// kind` has them do, for the build kit of a learner's controller.
	p, err := cluster.NewProvider(cluster.ProviderWithKind(cluster.KindOptions{DataDir: data, NodeImage: nodeImage, ConfigPath: config,
		Shared: []string{BinDir(t)}}))
	if err != nil {
		t.Fatalf("new kind provider: %v", err)
	}
	return p, data
}

// KindEnv returns the node image and the base kind config the kind tests
// run with: $OPLAB_KIND_NODE_IMAGE and $OPLAB_KIND_CONFIG, as `make
// kind-env` prints them. oplab itself reads them in its CLI's config only;
// a test that builds an application or a provider itself takes them here,
// as oplab run on the same machine would.
func KindEnv() (nodeImage, config string) {
	return os.Getenv(cluster.KindNodeImageEnv), os.Getenv("OPLAB_KIND_CONFIG")
}

// RequireSlowKind skips a kind test that takes many minutes unless
// $OPLAB_KIND_SLOW=1 as well.
func RequireSlowKind(t testing.TB) {
	t.Helper()
	if os.Getenv(KindSlowGate) != "1" {
		t.Skipf("slow kind test skipped: run `make test-kind` (or set %s=1 and %s=1)", KindGate, KindSlowGate)
	}
}

// NewKind creates a kind cluster for the test, deleted when the test ends.
// Kind clusters of all test packages are made one at a time (a file lock):
// each takes about 500 MiB and, while it starts, every core; `go test ./...`
// runs packages in parallel.
func NewKind(t testing.TB, opts ...cluster.CreateOption) *Cluster {
	t.Helper()
	p, data := NewKindProvider(t)
	lockKind(t)
	return create(t, p, data, UniqueName("t"), 15*time.Minute, opts...)
}

// lockKind holds the machine's kind test lock until the test's cleanups
// have run (registered first, it is released last, after the cluster's
// deletion).
func lockKind(t testing.TB) {
	t.Helper()
	dir := os.Getenv("OPLAB_KIND_LOCK_DIR")
	if dir == "" {
		dir = "/tmp" // not os.TempDir: Main gives each package its own
	}
	f, err := os.OpenFile(filepath.Join(dir, "oplab-kind-tests.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("kind test lock: %v", err)
	}
	start := time.Now()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("kind test lock: %v", err)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Logf("waited %s for another package's kind cluster", waited.Round(time.Second))
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}
