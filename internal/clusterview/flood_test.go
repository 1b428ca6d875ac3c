package clusterview

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/operator/install"
)

// flood is what a learner makes who applies, in the YAML editor, a
// Deployment of many replicas with the instance pods' labels copied and
// large annotations, an EndpointSlice of many addresses under the -ro
// Service's name and events with long messages: made here directly, as
// the controllers would.
type flood struct {
	pods, addresses, events int
	annotation              int // bytes of annotations on each pod
}

// make creates the flood's objects in namespace default for the
// PostgresCluster db.
func (f flood) make(t testing.TB, ctx context.Context, cfg *rest.Config) {
	t.Helper()
	fast := rest.CopyConfig(cfg)
	fast.QPS, fast.Burst = 500, 1000 // a learner's kubectl apply is not throttled by us
	cs, err := kubernetes.NewForConfig(fast)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a", f.annotation)
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for i := range f.pods {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("flood-%04d", i), Namespace: "default",
				Labels:      map[string]string{pgv1.LabelCluster: "db", pgv1.LabelRole: pgv1.RoleReplica, "app": "flood"},
				Annotations: map[string]string{"flood.example.com/blob": big}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Command: []string{"sh", "-c", strings.Repeat("echo flood; ", 100)}}}},
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("create %d pods: %d failed, the first: %v", f.pods, len(errs), errs[0])
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "flood-ro", Namespace: "default", Labels: map[string]string{discoveryv1.LabelServiceName: "db-ro"}},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for i := range f.addresses {
		slice.Endpoints = append(slice.Endpoints, discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}, TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: fmt.Sprintf("flood-%04d", i)}})
	}
	if _, err := cs.DiscoveryV1().EndpointSlices("default").Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create an EndpointSlice of %d addresses: %v", f.addresses, err)
	}
	long := strings.Repeat("m", 32<<10)
	for i := range f.events {
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("flood.%d", i), Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "flood-0000", Namespace: "default"},
			Reason:         "Flood", Message: fmt.Sprintf("%d %s", i, long), Type: corev1.EventTypeWarning,
			LastTimestamp: metav1.Now(), Source: corev1.EventSource{Component: "flood"},
		}
		if _, err := cs.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create event %d: %v", i, err)
		}
	}
}

// TestClusterViewFlood, against a real API server: a learner's flood of
// pods with the instance's labels and big annotations, of addresses and of
// long events. The View lists the first MaxPods pods by name and says how
// many more, the first MaxAddresses addresses, texts cut to MaxText; the
// watcher's caches hold each object without annotations, managed fields
// or specs, a few hundred bytes each where the learner wrote tens of KiB
// (32 KiB: more would take the learner's cell past its memory budget
// before the view is tested).
func TestClusterViewFlood(t *testing.T) {
	c := clustertest.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	installOperator(t, ctx, c)
	f := flood{pods: MaxPods + 50, addresses: MaxAddresses + 30, events: 40, annotation: 32 << 10}
	f.make(t, ctx, c.Config)

	w := &Watcher{Config: c.Config, Namespace: "default", Name: "db", Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	r := watch(t, ctx, w)
	v := r.wait("every pod and the slice's addresses", func(v View) bool {
		return len(v.Pods)+v.PodsMore == f.pods && addresses(v, "db-ro") == f.addresses
	})
	if len(v.Pods) != MaxPods || v.PodsMore != f.pods-MaxPods || v.Pods[0].Name != "flood-0000" || v.Pods[MaxPods-1].Name != fmt.Sprintf("flood-%04d", MaxPods-1) {
		t.Errorf("pods: got %d (%s..) and %d more, want the first %d by name and %d more", len(v.Pods), v.Pods[0].Name, v.PodsMore, MaxPods, f.pods-MaxPods)
	}
	for _, e := range v.Endpoints {
		if len(e.Addresses) > MaxAddresses {
			t.Errorf("endpoint %s: %d addresses, want at most %d", e.Service, len(e.Addresses), MaxAddresses)
		}
	}
	if len(v.Events) > 30 || v.EventsMore < f.events-30 {
		t.Errorf("events: got %d and %d more, want at most 30 and at least %d more", len(v.Events), v.EventsMore, f.events-30)
	}
	for _, e := range v.Events {
		if len(e.Message) > MaxText {
			t.Errorf("event %s: message of %d bytes, want at most %d", e.Reason, len(e.Message), MaxText)
		}
	}
	b, _ := json.Marshal(v)
	if len(b) > 128<<10 {
		t.Errorf("the view is %d KiB of JSON, want at most 128 KiB", len(b)>>10)
	}
	t.Logf("view: %d KiB of JSON for %d pods, %d addresses, %d events", len(b)>>10, f.pods, f.addresses, f.events)

	// The caches, as the watcher fills them.
	src := fill(t, ctx, w)
	kept := func(what string, inf cache.SharedIndexInformer, want int, each int) {
		t.Helper()
		objs := inf.GetStore().List()
		total := 0
		for _, o := range objs {
			m, err := metaOf(o)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.GetAnnotations()) > 0 || len(m.GetManagedFields()) > 0 || len(m.GetOwnerReferences()) > 0 {
				t.Fatalf("%s %s: cached with %d annotations, %d managed fields: want none", what, m.GetName(), len(m.GetAnnotations()), len(m.GetManagedFields()))
			}
			j, _ := json.Marshal(o)
			if len(j) > each {
				t.Fatalf("%s %s: cached as %d bytes of JSON, want at most %d:\n%s", what, m.GetName(), len(j), each, j)
			}
			total += len(j)
		}
		if len(objs) < want {
			t.Errorf("%s: %d cached, want at least %d", what, len(objs), want)
		}
		t.Logf("%s: %d cached, %d KiB of JSON", what, len(objs), total>>10)
	}
	kept("pod", src.pods, f.pods, 1<<10)
	kept("endpoint slice", src.slices, 1, (f.addresses+10)*128)
	kept("event", src.events, f.events, 2*MaxText+512)
	for _, o := range src.pods.GetStore().List() {
		if p := o.(*corev1.Pod); len(p.Spec.Containers) > 0 || p.Labels["app"] != "" {
			t.Fatalf("pod %s: cached with its containers or labels the view does not read", p.Name)
		}
	}
}

// installOperator installs the reference operator, and with it the
// PostgresCluster CRD the view watches, until the test ends.
func installOperator(t testing.TB, ctx context.Context, c *clustertest.Cluster) {
	t.Helper()
	in, err := install.ForCluster(c.Provider, c.Name, clustertest.BinDir(t), install.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Install(ctx); err != nil {
		t.Fatalf("install the operator: %v", err)
	}
	t.Cleanup(func() {
		if err := in.Uninstall(context.Background()); err != nil {
			t.Errorf("uninstall: %v", err)
		}
	})
}

// addresses counts the addresses of service's endpoint, listed and not.
func addresses(v View, service string) int {
	for _, e := range v.Endpoints {
		if e.Service == service {
			return len(e.Addresses) + e.AddressesMore
		}
	}
	return 0
}

// fill starts w's informers, as Views does, and returns them once their
// caches are filled; they stop when the test ends.
func fill(t testing.TB, ctx context.Context, w *Watcher) sources {
	t.Helper()
	src, factories, err := w.informers()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(func() {
		cancel()
		for _, f := range factories {
			f.Shutdown()
		}
	})
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	for _, inf := range []cache.SharedIndexInformer{src.pgc, src.pods, src.slices, src.events} {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			t.Fatal("the caches did not fill")
		}
	}
	return src
}

func metaOf(o any) (metav1.Object, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("cached %T is not an object", o)
	}
	return m, nil
}

// BenchmarkClusterViewFlood measures what one learner's flood costs the
// server while their cluster view is open: the heap the watcher's caches
// and its newest View hold once the flood is in them (heap-MiB, after a
// collection, less the heap before the watcher started), and the View's
// size (view-KiB). A thousand pods with 16 KiB of annotations each (what
// the cell's memory budget lets its API server hold), and -benchtime of
// one run: the flood is made once.
func BenchmarkClusterViewFlood(b *testing.B) {
	c := clustertest.New(b)
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	installOperator(b, ctx, c)
	f := flood{pods: 1000, addresses: 1000, events: 200, annotation: 16 << 10}
	f.make(b, ctx, c.Config)
	for b.Loop() {
		before := heap()
		w := &Watcher{Config: c.Config, Namespace: "default", Name: "db"}
		wctx, stop := context.WithCancel(ctx)
		var last []byte
		done := make(chan error, 1)
		got := make(chan struct{})
		var once sync.Once
		go func() {
			done <- w.Run(wctx, func(data []byte, _ string) {
				var v View
				if json.Unmarshal(data, &v) == nil && len(v.Pods)+v.PodsMore == f.pods {
					last = data
					once.Do(func() { close(got) })
				}
			})
		}()
		select {
		case <-got:
		case <-ctx.Done():
			b.Fatal("the view never held the whole flood")
		}
		after := heap()
		b.ReportMetric(float64(after-before)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(len(last))/(1<<10), "view-KiB")
		stop()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// heap is the live heap after a collection.
func heap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// testWriter writes to the test's log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
