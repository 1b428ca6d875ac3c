package app

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/room"
	"oplab.dev/oplab/internal/session"
)

// oneCluster is a machine with memory for one cluster: its headroom is
// what the clusters the provider lists leave of it.
type oneCluster struct {
	mu sync.Mutex
	a  *App
}

const testClusterCost = 300 * room.MiB

func (m *oneCluster) Headroom(ctx context.Context) (room.Headroom, error) {
	m.mu.Lock()
	a := m.a
	m.mu.Unlock()
	list, err := a.clusters.List(ctx)
	if err != nil {
		return room.Headroom{}, err
	}
	total := uint64(testClusterCost + room.DefaultMemoryMargin)
	used := min(total, uint64(len(list))*testClusterCost)
	return room.Headroom{MemAvailable: total - used, IdleCores: 2, Cores: 2}, nil
}

func (m *oneCluster) Cost(context.Context) (room.Cost, error) {
	return room.Cost{Memory: testClusterCost, CPU: 0.01, Clusters: 1}, nil
}

// updates collects what a start's progress hears.
type updates struct {
	mu   sync.Mutex
	list []session.Update
}

func (u *updates) progress(up session.Update) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.list = append(u.list, up)
}

func (u *updates) queued() []session.QueueData {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []session.QueueData
	for _, up := range u.list {
		if up.Kind == session.KindQueue && up.Queue != nil {
			out = append(out, *up.Queue)
		}
	}
	return out
}

// TestStartQueuedUntilRoom, on real clusters: on a machine with room for
// one cluster, a second learner's start waits in the queue — hearing its
// place, with no session recorded — until the first session ends, then
// starts; a third who leaves the page while queued leaves nothing.
func TestStartQueuedUntilRoom(t *testing.T) {
	ctx := context.Background()
	src := &oneCluster{}
	a, err := Open(ctx, Config{DataDir: t.TempDir(), BinDir: clustertest.BinDir(t),
		Admission: Admission{Source: src, Every: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	src.a = a
	t.Cleanup(func() { a.Close() })
	t.Cleanup(func() { stopAll(t, a) })

	alice, err := a.Start(ctx, session.StartOptions{Learner: "alice", Lab: "failover"}, nil)
	if err != nil {
		t.Fatal(err)
	}

	var bobHeard updates
	type result struct {
		st  *session.Status
		err error
	}
	bob := make(chan result, 1)
	go func() {
		st, err := a.Start(ctx, session.StartOptions{Learner: "bob", Lab: "failover"}, bobHeard.progress)
		bob <- result{st, err}
	}()
	waitFor(t, "bob is queued", func() bool { return len(bobHeard.queued()) > 0 })
	if got, want := bobHeard.queued()[0], (session.QueueData{Position: 1, Length: 1, Reason: room.ReasonMemory}); got != want {
		t.Errorf("bob heard %+v, want %+v", got, want)
	}

	// carol queues behind bob, then leaves the page.
	var carolHeard updates
	carolCtx, leave := context.WithCancel(ctx)
	carol := make(chan error, 1)
	go func() {
		_, err := a.Start(carolCtx, session.StartOptions{Learner: "carol", Lab: "failover"}, carolHeard.progress)
		carol <- err
	}()
	waitFor(t, "carol is queued second", func() bool {
		q := carolHeard.queued()
		return len(q) > 0 && q[len(q)-1].Position == 2
	})
	c, err := a.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Queue != 2 || c.Cost.Memory != testClusterCost || c.Reason != room.ReasonMemory {
		t.Errorf("capacity: got %+v, want 2 queued for memory, a cluster costing %d", c, testClusterCost)
	}
	leave()
	if err := <-carol; !errors.Is(err, context.Canceled) {
		t.Errorf("carol left: got %v, want context.Canceled", err)
	}
	for _, who := range []string{"bob", "carol"} {
		if list, err := a.sessions.Sessions(ctx, who); err != nil || len(list) != 0 {
			t.Errorf("%s while queued: got sessions %v (%v), want none", who, list, err)
		}
	}
	select {
	case r := <-bob:
		t.Fatalf("bob's start ended while alice's cluster took the room: %v, %v", r.st, r.err)
	default:
	}

	if _, err := a.sessions.Stop(ctx, alice.ID, "done", nil); err != nil {
		t.Fatal(err)
	}
	r := <-bob
	if r.err != nil {
		t.Fatalf("bob's start after alice's ended: %v", r.err)
	}
	if r.st.Learner != "bob" || r.st.State != session.Ready || !r.st.ClusterLive {
		t.Errorf("bob's session: got %s of %s (cluster live %v), want ready", r.st.State, r.st.Learner, r.st.ClusterLive)
	}
}

// TestRoomMadeForAStartAndAWake, on real clusters: on a machine capped at
// one cluster, bob's start takes the room of alice's session, which
// nobody looks at: it sleeps, stopped. When alice comes back, her wake
// from disk is a start like bob's, admitted the same way: bob's session,
// unseen since, gives the room back.
func TestRoomMadeForAStartAndAWake(t *testing.T) {
	ctx := context.Background()
	a, err := Open(ctx, Config{DataDir: t.TempDir(), BinDir: clustertest.BinDir(t),
		Admission: Admission{MaxClusters: 1, MakeRoomAfter: time.Millisecond, Every: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	t.Cleanup(func() { stopAll(t, a) })
	if !a.clusters.Info().Capabilities.Sleeps {
		t.Skip("this machine's clusters cannot sleep: no cell with a control group (see docs/security.md, the budget)")
	}
	alice, err := a.Start(ctx, session.StartOptions{Learner: "alice", Lab: "failover"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := a.Start(ctx, session.StartOptions{Learner: "bob", Lab: "failover"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := a.sessions.Status(ctx, alice.ID); err != nil || st.Asleep == nil || !st.Asleep.Stopped {
		t.Fatalf("alice's session after bob's start at the cap: asleep %+v (%v), want stopped for his room", st.Asleep, err)
	}
	if bob.State != session.Ready || !bob.ClusterLive {
		t.Fatalf("bob's session: %s (cluster live %v), want ready", bob.State, bob.ClusterLive)
	}

	st, err := a.Wake(ctx, alice.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Asleep != nil || !st.ClusterLive {
		t.Fatalf("alice woke: asleep %+v, cluster live %v; want awake", st.Asleep, st.ClusterLive)
	}
	if bs, err := a.sessions.Status(ctx, bob.ID); err != nil || bs.Asleep == nil || !bs.Asleep.Stopped {
		t.Fatalf("bob's session after alice woke at the cap: asleep %+v (%v), want stopped for her room", bs.Asleep, err)
	}
	if n, err := a.liveClusters(ctx); err != nil || n != 1 {
		t.Errorf("live clusters: %d (%v), want 1, the cap", n, err)
	}
	// Bob's session ends while it sleeps stopped: its cluster is deleted,
	// and its operator log kept for the debrief without waking it.
	if _, err := a.sessions.Stop(ctx, bob.ID, "done", nil); err != nil {
		t.Errorf("stop bob's session asleep: %v", err)
	}
	if !exists(a.recordedLog(bob.ID)) {
		t.Errorf("bob's session ended asleep: its operator log was not kept for the debrief")
	}
	if list, err := a.clusters.List(ctx); err != nil || len(list) != 1 {
		t.Errorf("clusters after bob's session ended: %v (%v), want alice's only", list, err)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// TestAdmissionMeasuresTheHostCluster: on the pods provider the gate
// measures the host cluster's requests (here an embedded cluster's node of
// 32 cores and 128 GiB), not this machine's /proc, and keeps no memory
// margin beyond them.
func TestAdmissionMeasuresTheHostCluster(t *testing.T) {
	host := clustertest.New(t)
	p, err := cluster.NewProvider(cluster.ProviderWithPods(cluster.PodsOptions{
		Config: host.Config, Namespace: metav1.NamespaceDefault, Image: cluster.DefaultPodsImage, DataDir: t.TempDir(),
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	g, err := newGate(Config{DataDir: t.TempDir()}, p, func(context.Context) (int, error) { return 0, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	var snap room.Snapshot
	// The new node is schedulable once the node lifecycle controller has
	// seen it ready.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if snap, err = g.Snapshot(t.Context()); err == nil && snap.Headroom.Cores == 32 {
			break
		}
	}
	if err != nil || snap.Headroom.Cores != 32 || snap.Headroom.MemAvailable != 128<<30 || snap.Cost.Memory != 304*room.MiB {
		t.Fatalf("the gate on the pods provider sees %+v (%v), want the host's node (32 cores, 128 GiB) and a cell's requests (304 MiB)", snap, err)
	}
	tk, ok, err := g.Try(t.Context())
	if err != nil || !ok {
		t.Fatalf("a start on an empty host: admitted %v (%v), want admitted", ok, err)
	}
	tk.Done(false)
}
