package clusterview

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestWatcher watches a PostgresCluster that the real operator runs in a
// real embedded cluster: the view reaches Ready with a primary behind -rw;
// after the primary pod is deleted, the view shows the change and then a
// primary again.
func TestWatcher(t *testing.T) {
	c := clustertest.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	installOperator(t, ctx, c)

	// The watcher starts before the cluster exists: the view says so.
	r := watch(t, ctx, &Watcher{Config: c.Config, Namespace: "default", Name: "db"})
	first := r.wait("the first view", func(v View) bool { return true })
	if first.Cluster != nil || len(first.Pods) != 0 || len(first.Endpoints) != 2 {
		t.Errorf("before the cluster exists: got %+v, want no cluster, no pods, two empty endpoints", first)
	}

	dyn := dynamic.NewForConfigOrDie(c.Config)
	pgc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "databases.example.com/v1", "kind": "PostgresCluster",
		"metadata": map[string]any{"name": "db", "namespace": "default"},
		"spec":     map[string]any{"replicas": int64(2), "version": "16"},
	}}
	if _, err := dyn.Resource(pgv1.GroupVersion.WithResource("postgresclusters")).Namespace("default").Create(ctx, pgc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create PostgresCluster: %v", err)
	}
	ready := r.wait("Ready with a primary behind db-rw", func(v View) bool {
		return v.Cluster.Condition(pgv1.ConditionReady) == "True" && v.Primary() != "" &&
			v.Cluster.CurrentPrimary == v.Primary() && rwPod(v) == v.Primary() && len(v.Pods) == 2
	})
	old := ready.Primary()
	if ready.Cluster.Replicas != 2 || ready.Cluster.ReadyReplicas != 2 {
		t.Errorf("ready view: replicas %d/%d, want 2/2", ready.Cluster.ReadyReplicas, ready.Cluster.Replicas)
	}
	if len(ready.Events) == 0 {
		t.Error("ready view has no events, want the operator's and the controllers'")
	}

	if err := c.Client.CoreV1().Pods("default").Delete(ctx, old, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete the primary pod: %v", err)
	}
	r.wait("the primary's loss", func(v View) bool {
		return v.Primary() != old || rwPod(v) != old
	})
	after := r.wait("a primary again behind db-rw", func(v View) bool {
		return v.Primary() != "" && rwPod(v) == v.Primary() && v.Cluster.CurrentPrimary == v.Primary()
	})
	t.Logf("primary %s, after its deletion %s", old, after.Primary())
}

// rwPod is the pod behind the -rw Service when there is exactly one.
func rwPod(v View) string {
	for _, e := range v.Endpoints {
		if e.Service == v.Name+"-rw" && len(e.Addresses) == 1 && e.Addresses[0].Ready {
			return e.Addresses[0].Pod
		}
	}
	return ""
}

// viewReader reads the watcher's views in order and remembers the latest.
// watch runs w until the test ends and reads its views.
func watch(t *testing.T, ctx context.Context, w *Watcher) *viewReader {
	views := make(chan []byte, 256)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- w.Run(wctx, func(b []byte, _ string) {
			select { // the test reads every view as it comes, until it stops the watcher
			case views <- b:
			case <-wctx.Done():
			}
		})
	}()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("watcher ended with %v", err)
		}
	})
	return &viewReader{t: t, views: views}
}

type viewReader struct {
	t      *testing.T
	views  <-chan []byte
	latest []byte
}

// wait returns the first view, the latest already read included, that
// satisfies ok: a view is a snapshot of the state, and the state a test
// waits for may have come in the same snapshot as the one it waited for
// before. It fails after a minute with the latest view.
func (r *viewReader) wait(what string, ok func(View) bool) View {
	r.t.Helper()
	deadline := time.After(time.Minute)
	b := r.latest
	for {
		if b != nil {
			r.latest = b
			var v View
			if err := json.Unmarshal(b, &v); err != nil {
				r.t.Fatalf("view %s: %v", b, err)
			}
			if ok(v) {
				return v
			}
		}
		select {
		case b = <-r.views:
		case <-deadline:
			r.t.Fatalf("timed out waiting for %s; latest view:\n%s", what, pretty(r.latest))
		}
	}
}

func pretty(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return fmt.Sprint(string(out))
}
