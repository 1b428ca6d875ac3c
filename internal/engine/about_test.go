package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"oplab.dev/oplab/internal/lab"
)

// TestEventAbout: an event is evidence about the lab's cluster only when
// its object is that PostgresCluster or one of its objects, in its
// namespace; a decoy cluster's genuine events are not.
func TestEventAbout(t *testing.T) {
	target := lab.Target{Cluster: "prod-db", Namespace: "default"}
	for _, tc := range []struct {
		kind, ns, name string
		want           bool
	}{
		{"PostgresCluster", "default", "prod-db", true},
		{"PostgresCluster", "default", "x-prod-db-y", false},
		{"PostgresCluster", "default", "prod-db-2", false},
		{"Pod", "default", "prod-db-2", true},
		{"Pod", "default", "prod-db-decoy-0", false},
		{"Service", "default", "prod-db-rw", true},
		{"PersistentVolumeClaim", "default", "data-prod-db-0", true},
		{"PostgresCluster", "default", "decoy", false},
		{"Service", "default", "prod-dbx", false},
		{"PersistentVolumeClaim", "default", "decoy-prod-dbx-0", false},
		{"PostgresCluster", "other", "prod-db", false},
	} {
		if got := about(corev1.ObjectReference{Kind: tc.kind, Namespace: tc.ns, Name: tc.name}, target); got != tc.want {
			t.Errorf("about(%s %s/%s): got %v, want %v", tc.kind, tc.ns, tc.name, got, tc.want)
		}
	}
}
