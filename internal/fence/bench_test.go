package fence

import (
	"context"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

// BenchmarkInstall measures Install on a fresh embedded cluster: applying
// the objects, then waiting until the API server enforces every policy
// (its policy refresh, about once a second, is most of it). engine.Setup
// runs it beside the operator's install, so a session start does not
// wait for it.
func BenchmarkInstall(b *testing.B) {
	var total time.Duration
	for range b.N {
		b.StopTimer()
		c := clustertest.New(b)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		b.StartTimer()
		start := time.Now()
		err := Install(ctx, c.Config)
		total += time.Since(start)
		b.StopTimer()
		cancel()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/install")
}
