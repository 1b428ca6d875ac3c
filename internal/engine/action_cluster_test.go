package engine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pgv1 "oplab.dev/oplab/api/v1"
)

// TestSwitchoverAsksAgain: the operator rejects a switchover to an instance
// that is not a ready replica yet (and removes the request), as right after
// a failover or a restart. The switchover action asks again until it is
// taken: here prod-db-3 exists only once the cluster is scaled to four.
func TestSwitchoverAsksAgain(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	l := shipped(t, "switchover")
	ctx := testContext(t, 3*time.Minute)
	if err := e.Setup(ctx, l, logProgress(t)); err != nil {
		t.Fatalf("setup: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- e.switchover(ctx, l.Target, "prod-db-3") }()

	// Wait for the operator to reject the first request, then scale up.
	events := e.cs.CoreV1().Events(namespace(l.Target))
	for {
		list, err := events.List(ctx, metav1.ListOptions{FieldSelector: "reason=SwitchoverRejected"})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) > 0 {
			t.Logf("rejected: %s", list.Items[0].Message)
			break
		}
		select {
		case err := <-done:
			t.Fatalf("switchover to prod-db-3 ended before the operator rejected it: %v", err)
		case <-ctx.Done():
			t.Fatal("the operator never rejected a switchover to prod-db-3 of a three-instance cluster")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := e.scaleCluster(ctx, l.Target, 4); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("switchover to prod-db-3 after the scale-up: %v", err)
	}
	// The action returns once status names prod-db-3; the operator labels
	// the pod right after writing that status.
	var role string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		pod, err := e.cs.CoreV1().Pods(namespace(l.Target)).Get(ctx, "prod-db-3", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if role = pod.Labels[pgv1.LabelRole]; role == pgv1.RolePrimary {
			return
		}
	}
	t.Errorf("prod-db-3 role label %q, want primary", role)
}
