package app

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// TestOneReplicaLeads runs two serving Apps as two replicas of one oplab
// (one store) electing their leader with a Lease on a real API server.
// While someone else holds the Lease, neither does any housekeeping, though
// there is some to do and their rounds come every 200 ms. Once the Lease
// is free exactly one leads, the Lease names it, and it does the
// housekeeping — a session its starter left provisioning is failed, a
// session past its time limit is ended — while the other does none of it.
// When the leader stops, the other takes over, and the housekeeping of
// sessions left after that is its.
func TestOneReplicaLeads(t *testing.T) {
	host := clustertest.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	data := t.TempDir()
	logs := map[string]*records{}
	apps := map[string]*App{}
	serve := func(id string) *Runtime {
		logs[id] = &records{}
		a, err := Open(ctx, Config{DataDir: data, BinDir: t.TempDir(), Logger: slog.New(logs[id])})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		apps[id] = a
		r, err := a.Serve(ctx, RuntimeOptions{
			HousekeepingEvery: 200 * time.Millisecond,
			Expire:            session.ExpireOptions{Max: time.Hour},
			Leader: &LeaderOptions{
				Config: host.Config, Namespace: "default", Name: "oplab-background", Identity: id,
				LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 250 * time.Millisecond,
			}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// What housekeeping is for: a session whose starter is gone (its lock
	// is free) left provisioning, and one older than the time limit.
	seed := func(a *App, suffix string) (stuck, old string) {
		t.Helper()
		stuck, old = "stuck"+suffix, "old"+suffix
		hourAgo, twoHoursAgo := time.Now().Add(-time.Hour), time.Now().Add(-2*time.Hour)
		for _, s := range []*store.Session{
			{ID: stuck, Learner: "ada" + suffix, Lab: "failover", Cluster: stuck, Provider: Embedded, State: string(session.Provisioning), Lang: "en", Created: hourAgo},
			{ID: old, Learner: "bob" + suffix, Lab: "failover", Cluster: old, Provider: Embedded, State: string(session.Ready), Lang: "en", Created: twoHoursAgo},
		} {
			if err := a.store.CreateSession(ctx, s, &store.Event{Kind: session.KindState, Message: s.State, At: s.Created}); err != nil {
				t.Fatal(err)
			}
		}
		return stuck, old
	}
	housekept := func(a *App, stuck, old string) {
		t.Helper()
		want := map[string]session.State{stuck: session.Failed, old: session.Expired}
		got := map[string]string{}
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			for id := range want {
				s, err := a.store.Session(ctx, id)
				if err != nil {
					return false, err
				}
				got[id] = s.State
			}
			return got[stuck] == string(session.Failed) && got[old] == string(session.Expired), nil
		}); err != nil {
			t.Fatalf("no housekeeping: sessions %v, want %v (%v)", got, want, err)
		}
	}

	// The Lease is someone else's for an hour: neither replica may lead.
	now := metav1.NewMicroTime(time.Now())
	leases := host.Client.CoordinationV1().Leases("default")
	if _, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "oplab-background"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("elsewhere"), LeaseDurationSeconds: ptr.To[int32](3600), AcquireTime: &now, RenewTime: &now,
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	replicas := map[string]*Runtime{"one": serve("one"), "two": serve("two")}
	stuck, old := seed(apps["one"], "")
	time.Sleep(1500 * time.Millisecond) // seven rounds of housekeeping, had anyone led
	for id, r := range replicas {
		if r.Leading() {
			t.Errorf("replica %s leads while the Lease is someone else's", id)
		}
		if w := logs[id].work(); len(w) > 0 {
			t.Errorf("replica %s, not leading, did background work: %q", id, w)
		}
	}
	for id, want := range map[string]session.State{stuck: session.Provisioning, old: session.Ready} {
		if s, err := apps["one"].store.Session(ctx, id); err != nil || s.State != string(want) {
			t.Errorf("session %s while nobody leads: got %q (%v), want %s, untouched", id, s.State, err, want)
		}
	}
	// The Lease is given up: one of the two takes it.
	if err := leases.Delete(ctx, "oplab-background", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	leader := func() (string, int) {
		n, who := 0, ""
		for id, r := range replicas {
			if r.Leading() {
				n, who = n+1, id
			}
		}
		return who, n
	}
	holder := func() string {
		l, err := host.Client.CoordinationV1().Leases("default").Get(ctx, "oplab-background", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	var first string
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		who, n := leader()
		first = who
		return n == 1 && holder() == who, nil
	}); err != nil {
		t.Fatalf("no single leader named by the Lease: leading %q, Lease holder %q", first, holder())
	}
	second := "two"
	if first == "two" {
		second = "one"
	}
	housekept(apps[first], stuck, old)
	// Through several renewals and housekeeping rounds, still one, and
	// the other did no housekeeping at all.
	for range 10 {
		time.Sleep(300 * time.Millisecond)
		if who, n := leader(); n != 1 || who != first {
			t.Fatalf("leaders: %d (%q), want only %q", n, who, first)
		}
	}
	for _, id := range []string{stuck, old} {
		if !logs[first].did(id) {
			t.Errorf("the leader %s's log does not say it housekept %s:\n%s", first, id, logs[first])
		}
	}
	if w := logs[second].work(); len(w) > 0 {
		t.Errorf("replica %s, not leading, did background work: %q", second, w)
	}

	// The leader stops (a replica's pod deleted): it gives the Lease up,
	// and the other takes the work, the sessions left from now on with it.
	start := time.Now()
	if err := replicas[first].Close(); err != nil {
		t.Fatal(err)
	}
	delete(replicas, first)
	stuck2, old2 := seed(apps[second], "-later")
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		who, n := leader()
		return n == 1 && who != first && holder() == who, nil
	}); err != nil {
		t.Fatalf("the other replica did not take over: Lease holder %q", holder())
	}
	t.Logf("the other replica leads %s after the leader stopped", time.Since(start).Round(time.Millisecond))
	housekept(apps[second], stuck2, old2)
	for _, id := range []string{stuck2, old2} {
		if !logs[second].did(id) {
			t.Errorf("the new leader %s's log does not say it housekept %s:\n%s", second, id, logs[second])
		}
		if logs[first].did(id) {
			t.Errorf("%s, which stopped, housekept %s", first, id)
		}
	}
	for _, r := range replicas {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}
}

// records is a slog.Handler that keeps a replica's log lines.
type records struct {
	mu    sync.Mutex
	lines []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, b.String())
	return nil
}

// The runtime's lines that say it did background work (runtime.go, leader.go).
var workLines = []string{"leading: doing the background work", "recovered sessions", "sessions expired"}

// work returns the lines that say background work was done.
func (r *records) work() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(r.lines), func(l string) bool {
		return !slices.ContainsFunc(workLines, func(w string) bool { return strings.HasPrefix(l, w) })
	})
}

// did reports whether a line of work names session id.
func (r *records) did(id string) bool {
	return slices.ContainsFunc(r.work(), func(l string) bool {
		return strings.Contains(l, "["+id+"]") || strings.Contains(l, "["+id+" ") || strings.Contains(l, " "+id+"]") || strings.Contains(l, " "+id+" ")
	})
}

func (r *records) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}
