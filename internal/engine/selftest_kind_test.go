package engine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/labs"
)

// TestSelfTestAllLabsOnKind is `oplab lab selftest --all --provider kind`:
// every shipped lab passes its self-test on a real kind cluster, where the
// operator runs as a pod from its image and the PostgresCluster's instances
// are real PostgreSQL servers. The labs share one cluster, torn down between
// labs, as on embedded. Gated: see clustertest.NewKindProvider and
// clustertest.RequireSlowKind (about 25 minutes on 2 cores).
func TestSelfTestAllLabsOnKind(t *testing.T) {
	clustertest.RequireSlowKind(t)
	c := clustertest.NewKind(t)
	e, err := New(Target{Config: c.Config, Provider: c.Provider, Cluster: c.Name, BinDir: clustertest.BinDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := lab.IDs(labs.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 6 {
		t.Fatalf("got %d shipped labs, want at least 6", len(ids))
	}
	// Real pods start, clone and fail over in tens of seconds, not
	// milliseconds: a lab gets more time than on embedded.
	selfTestLabs(t, e, ids, 15*time.Minute)
	if _, err := e.cs.StorageV1().StorageClasses().Get(t.Context(), "fast-ssd", metav1.GetOptions{}); err == nil {
		t.Errorf("after the storage lab's teardown: got StorageClass fast-ssd, want it deleted")
	}
}
