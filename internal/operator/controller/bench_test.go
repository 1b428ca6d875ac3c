package controller_test

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// failoverRuns is how many failovers one benchmark iteration measures.
const failoverRuns = 10

// BenchmarkFailover measures, on an embedded cluster with simulated
// instances, the time from deleting the primary's pod to the new primary
// being the only endpoint of the -rw Service. Each iteration makes
// failoverRuns failovers and reports their median and maximum in seconds
// (target: under 3 s).
func BenchmarkFailover(b *testing.B) {
	e := newEnv(b)
	ns := e.namespace(b, "bench")
	e.operator(b, e.cfg, ns)
	ctx := context.Background()
	if err := e.cl.Create(ctx, cluster(ns, "db", 3)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		var took []time.Duration
		for range failoverRuns {
			b.StopTimer()
			pgc := e.waitReady(b, ns, "db", 3, 2*time.Minute)
			old := pgc.Status.CurrentPrimary
			e.waitFor(b, 30*time.Second, "-rw on "+old, func() (bool, string) {
				return slices.Equal(e.endpoints(b, ns, "db-rw"), []string{old}), "not yet"
			})
			b.StartTimer()
			start := time.Now()
			if err := e.cl.Delete(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: old}}); err != nil {
				b.Fatal(err)
			}
			for {
				if rw := e.endpoints(b, ns, "db-rw"); len(rw) == 1 && rw[0] != old {
					break
				}
				if time.Since(start) > time.Minute {
					b.Fatalf("no new primary behind db-rw a minute after deleting %s", old)
				}
				time.Sleep(10 * time.Millisecond)
			}
			took = append(took, time.Since(start))
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		b.ReportMetric(median(took).Seconds(), "median-s")
		b.ReportMetric(took[len(took)-1].Seconds(), "max-s")
		b.Logf("failover times: %v", took)
	}
}

func median(d []time.Duration) time.Duration {
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return (d[n/2-1] + d[n/2]) / 2
}
