package install

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

// BenchmarkInstall measures installing the operator (the real pg-operator
// as a host process) into an embedded cluster until it is ready: part of the
// "session ready" time. Each iteration installs into a clean cluster.
func BenchmarkInstall(b *testing.B) {
	c := clustertest.New(b)
	dir := b.TempDir()
	for name, pkg := range map[string]string{"hostpod": "oplab.dev/oplab/cmd/hostpod", "pg-operator": "oplab.dev/oplab/cmd/pg-operator"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	in, err := ForCluster(c.Provider, c.Name, dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := in.Install(ctx); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
		b.StopTimer()
		if err := in.Uninstall(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "install-s/op")
}
