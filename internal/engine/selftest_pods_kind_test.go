package engine

import (
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestKindSelfTestFailoverOnPods is `oplab --provider pods lab selftest
// failover` on a kind host cluster: the learner's control plane is a pod
// of the host, the reference operator runs in the cell's second container,
// and the failover lab passes its self-test there, each shortcut refused.
// Gated as the labs' self-tests on kind (clustertest.RequireSlowKind:
// `make test-kind`, about 2.5 minutes); `make test` runs
// TestKindPodsProvider, the cells themselves with their operators.
func TestKindSelfTestFailoverOnPods(t *testing.T) {
	clustertest.RequireSlowKind(t)
	p, _, data := clustertest.NewPodsProvider(t)
	c := clustertest.CreatePods(t, p, data, "failover-selftest")
	e, err := New(Target{Config: c.Config, Provider: p, Cluster: c.Name, BinDir: clustertest.BinDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	selfTestLabs(t, e, []string{"failover"}, 10*time.Minute)
}
