package instance

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// clock is a settable time source.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newPods(t *testing.T, names ...string) (client.Client, []*corev1.Pod) {
	t.Helper()
	var pods []*corev1.Pod
	var objs []client.Object
	for _, n := range names {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "ns", UID: types.UID("uid-" + n)}}
		pods = append(pods, p)
		objs = append(objs, p)
	}
	c := fake.NewClientBuilder().WithObjects(objs...).Build()
	for _, p := range pods {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(p), p); err != nil {
			t.Fatal(err)
		}
	}
	return c, pods
}

func TestSimulatedLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c, pods := newPods(t, "db-0", "db-1", "db-2")
	sim := NewSimulated(c, SimulatedWithClock(clk.now))
	p0, p1, p2 := pods[0], pods[1], pods[2]

	st, err := sim.Status(ctx, p0)
	if err != nil || st.Initialized {
		t.Fatalf("fresh pod: got %+v, %v, want not initialized", st, err)
	}
	if err := sim.Follow(ctx, p1, p0); err == nil {
		t.Fatalf("follow a fresh pod: got no error, want one")
	}
	if err := sim.Promote(ctx, p0); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{p1, p2} {
		if err := sim.Follow(ctx, p, p0); err != nil {
			t.Fatal(err)
		}
	}
	clk.advance(10 * time.Second)

	prim, _ := sim.Status(ctx, p0)
	if !prim.IsPrimary() || prim.CurrentLSN <= initialLSN {
		t.Fatalf("primary after 10s: got %+v, want a primary past %s", prim, initialLSN)
	}
	r1, _ := sim.Status(ctx, p1)
	r2, _ := sim.Status(ctx, p2)
	for _, r := range []Status{r1, r2} {
		if !r.InRecovery || r.Upstream != "db-0" {
			t.Fatalf("replica: got %+v, want in recovery following db-0", r)
		}
		if r.Position() >= prim.Position() || r.Position() == 0 {
			t.Fatalf("replica position %s, primary %s: want replica behind but started", r.Position(), prim.Position())
		}
		if r.ReplayedLSN > r.ReceivedLSN {
			t.Fatalf("replayed %s past received %s", r.ReplayedLSN, r.ReceivedLSN)
		}
	}

	// Following the same primary again writes nothing.
	rv := p1.ResourceVersion
	if err := sim.Follow(ctx, p1, p0); err != nil {
		t.Fatal(err)
	}
	if p1.ResourceVersion != rv {
		t.Fatalf("second follow: resourceVersion %s → %s, want unchanged", rv, p1.ResourceVersion)
	}

	// Promote a replica: a new timeline, starting where the replica was.
	before := r1.Position()
	if err := sim.Promote(ctx, p1); err != nil {
		t.Fatal(err)
	}
	np, _ := sim.Status(ctx, p1)
	if !np.IsPrimary() || np.CurrentLSN != before {
		t.Fatalf("promoted: got %+v, want primary at %s", np, before)
	}
	if p1.Annotations[AnnotationSimTimeline] != "2" {
		t.Fatalf("timeline: got %q, want 2", p1.Annotations[AnnotationSimTimeline])
	}
	// The old primary rejoins as a replica of the new one.
	if err := sim.Follow(ctx, p0, p1); err != nil {
		t.Fatal(err)
	}
	old, _ := sim.Status(ctx, p0)
	if !old.InRecovery || old.Upstream != "db-1" {
		t.Fatalf("old primary: got %+v, want replica of db-1", old)
	}
	// The state is in the API object, not in memory: a fresh read agrees.
	var got corev1.Pod
	if err := c.Get(ctx, client.ObjectKeyFromObject(p0), &got); err != nil {
		t.Fatal(err)
	}
	if got.Annotations[AnnotationSimRole] != "replica" {
		t.Fatalf("stored role: got %q, want replica", got.Annotations[AnnotationSimRole])
	}
}

func TestReadSimStateErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ann  map[string]string
	}{
		{"unknown role", map[string]string{AnnotationSimRole: "leader"}},
		{"bad timeline", map[string]string{AnnotationSimRole: "primary", AnnotationSimTimeline: "x"}},
		{"bad lsn", map[string]string{AnnotationSimRole: "primary", AnnotationSimTimeline: "1", AnnotationSimLSNBase: "zz", AnnotationSimLSNSince: "2026-01-01T00:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: tt.ann}}
			if _, err := readSimState(pod); err == nil {
				t.Fatalf("got no error, want one")
			}
		})
	}
}

// TestSimulatedDemote: a demoted primary stops taking writes before
// another is promoted: it reports recovery from the WAL position it had
// reached, with no upstream; it then follows the new primary. A
// pod being deleted reports no server at all.
func TestSimulatedDemote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c, pods := newPods(t, "db-0", "db-1")
	sim := NewSimulated(c, SimulatedWithClock(clk.now))
	p0, p1 := pods[0], pods[1]
	if err := sim.Promote(ctx, p0); err != nil {
		t.Fatal(err)
	}
	if err := sim.Follow(ctx, p1, p0); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	if err := sim.Demote(ctx, p1); err != nil {
		t.Fatalf("demote a replica: %v, want nil", err)
	}
	before, err := sim.Status(ctx, p0)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Demote(ctx, p0); err != nil {
		t.Fatal(err)
	}
	after, err := sim.Status(ctx, p0)
	if err != nil {
		t.Fatal(err)
	}
	if after.IsPrimary() || !after.InRecovery || after.Upstream != "" {
		t.Fatalf("demoted db-0 = %+v, want a replica with no upstream", after)
	}
	if after.Position() > before.Position() {
		t.Errorf("demoted db-0 at %s, past the %s it had reached as primary", after.Position(), before.Position())
	}
	if err := sim.Promote(ctx, p1); err != nil {
		t.Fatal(err)
	}
	if err := sim.Follow(ctx, p0, p1); err != nil {
		t.Fatalf("demoted db-0 follow the new primary: %v", err)
	}
	if st, _ := sim.Status(ctx, p0); st.Upstream != "db-1" {
		t.Errorf("db-0 streams from %q, want db-1", st.Upstream)
	}

	p1.DeletionTimestamp = &metav1.Time{Time: clk.now()}
	if st, err := sim.Status(ctx, p1); err != nil || st.Initialized || st.IsPrimary() {
		t.Errorf("primary pod being deleted: got %+v, %v, want no server", st, err)
	}
}
