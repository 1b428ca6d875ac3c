package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestStopAndStartKeepTheLearnersObjects stops a cluster as a pod's end
// stops it and starts it again from its directory, as the pods provider's
// control-plane pod does after it is replaced: the learner's objects are
// there, the node is Ready, a new object can be made, and a second Start of
// a running cluster is refused.
func TestStopAndStartKeepTheLearnersObjects(t *testing.T) {
	c := clustertest.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cms := c.Client.CoreV1().ConfigMaps("default")
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "before-stop"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if err := c.Provider.Stop(ctx, c.Name); err != nil {
		t.Fatal(err)
	}
	st, err := c.Provider.Status(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != cluster.StateStopped {
		t.Fatalf("after Stop: state %s, want stopped", st.State)
	}

	var steps []string
	start := time.Now()
	if err := c.Provider.Start(ctx, c.Name, cluster.CreateWithProgress(func(s cluster.Step) {
		if s.Done {
			steps = append(steps, s.Name)
		}
	})); err != nil {
		t.Fatal(err)
	}
	t.Logf("started again in %s: %q", time.Since(start).Round(time.Millisecond), steps)
	for _, s := range steps {
		if s == "Creating the node" {
			t.Errorf("Start made the node again: steps %q", steps)
		}
	}
	if st, err = c.Provider.Status(ctx, c.Name); err != nil || st.State != cluster.StateRunning {
		t.Fatalf("after Start: state %s (%v), want running", st.State, err)
	}
	got, err := cms.Get(ctx, "before-stop", metav1.GetOptions{})
	if err != nil || got.Data["k"] != "v" {
		t.Fatalf("the ConfigMap made before Stop: %v, %v", got.Data, err)
	}
	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-start"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create after Start: %v", err)
	}
	if err := c.Provider.Start(ctx, c.Name); err == nil || !strings.Contains(err.Error(), "is running") {
		t.Errorf("Start of a running cluster: got %v, want it refused as running", err)
	}
}
