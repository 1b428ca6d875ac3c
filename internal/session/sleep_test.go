package session

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/store"
	"oplab.dev/oplab/internal/walltest"
)

// TestSleepAndWake: a learner breaks the rbac lab's cluster and walks away.
// Nobody looks, so the session sleeps (frozen), and a server started
// again finds it asleep and deepens its sleep (stopped, its memory given
// back). The learner comes back: a page and a check ask at the same
// moment, and the session wakes once, with everything the learner made
// and the fault still live. They repair it, and the time to recovery
// leaves out the time the session slept. Asleep again, frozen, the machine
// restarts: the next request starts the cluster from its directory.
func TestSleepAndWake(t *testing.T) {
	ctx := t.Context()
	opts, p := sleepOptions(t)
	st, bin := opts.Store.(*store.DB), opts.BinDir
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Start(ctx, StartOptions{Learner: "alice", Lab: "rbac"}, nil)
	if s != nil {
		defer func() {
			if _, err := m.Stop(context.WithoutCancel(ctx), s.ID, "", nil); err != nil {
				t.Errorf("stop: %v", err)
			}
		}()
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.RESTConfig(s.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	admin := kubernetes.NewForConfigOrDie(cfg)
	if _, err := admin.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mine"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	chaos, err := m.Chaos(ctx, s.ID, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := chaos.Attempt.T0

	// A page open keeps it awake, however long nobody else asked.
	watched := func(id string) bool { return id == s.ID }
	if slept, err := m.Sleep(ctx, SleepOptions{Freeze: time.Nanosecond, Watched: watched}); err != nil || len(slept) > 0 {
		t.Fatalf("watched: slept %v (%v), want none", slept, err)
	}
	// The learner closes the page: it sleeps.
	fell := time.Now()
	if slept, err := m.Sleep(ctx, SleepOptions{Freeze: time.Nanosecond}); err != nil || len(slept) != 1 || slept[0] != s.ID {
		t.Fatalf("nobody looking: slept %v (%v), want %s", slept, err, s.ID)
	}
	asleep, err := m.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if asleep.Asleep == nil || asleep.Asleep.Stopped || asleep.Budget == nil || asleep.Budget.Trouble != nil {
		t.Fatalf("frozen: asleep %+v, budget %+v; want frozen, with no trouble", asleep.Asleep, asleep.Budget)
	}
	if slept, err := m.Sleep(ctx, SleepOptions{Freeze: time.Nanosecond}); err != nil || len(slept) > 0 {
		t.Fatalf("frozen already: slept %v (%v), want none", slept, err)
	}
	time.Sleep(2 * time.Second) // away

	// The server starts again: another Manager on the same store and
	// clusters finds the session asleep, and stops its cluster.
	m2, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if slept, err := m2.Sleep(ctx, SleepOptions{Freeze: time.Nanosecond, Stop: time.Nanosecond}); err != nil || len(slept) != 1 {
		t.Fatalf("asleep for longer: slept %v (%v), want the session stopped", slept, err)
	}
	if cs, err := p.Status(ctx, s.Cluster); err != nil || cs.State != cluster.StateStopped {
		t.Fatalf("stopped asleep: the cluster is %s (%v), want stopped", cs.State, err)
	}
	deeper, err := m2.Status(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if deeper.Asleep == nil || !deeper.Asleep.Stopped || !deeper.Asleep.Since.Equal(asleep.Asleep.Since) {
		t.Fatalf("stopped: asleep %+v, want stopped since it first fell asleep (%v)", deeper.Asleep, asleep.Asleep.Since)
	}
	if n, err := m2.Stopped(ctx); err != nil || n != 1 {
		t.Errorf("sessions stopped asleep: %d (%v), want 1 (admission does not count them)", n, err)
	}

	// The learner comes back: their page and a check at once.
	back := time.Now()
	var (
		wg       sync.WaitGroup
		checkErr error
		woke     *Status
		wakeErr  error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, checkErr = m2.Check(ctx, s.ID, nil)
	}()
	go func() {
		defer wg.Done()
		woke, wakeErr = m2.Wake(ctx, s.ID, nil)
	}()
	wg.Wait()
	if checkErr != nil || wakeErr != nil {
		t.Fatalf("a check and a page at once: %v, %v", checkErr, wakeErr)
	}
	t.Logf("woke from disk, and checked, in %s", time.Since(back).Round(time.Millisecond))
	if woke.Asleep != nil {
		t.Fatalf("woken: still asleep %+v", woke.Asleep)
	}
	evs, err := st.LatestEvents(ctx, s.ID, store.EventFilter{Kinds: []string{KindSleep, KindWake}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
	}
	if len(kinds) != 3 || kinds[0] != KindSleep || kinds[1] != KindSleep || kinds[2] != KindWake {
		t.Errorf("sleep and wake events, oldest first: %v, want two sleeps, then one wake", kinds)
	}
	if _, err := admin.CoreV1().ConfigMaps("default").Get(ctx, "mine", metav1.GetOptions{}); err != nil {
		t.Errorf("woken: the learner's ConfigMap: %v", err)
	}
	away := woke.Attempt.Away.Duration()
	if away < 2*time.Second || away > time.Since(fell) {
		t.Errorf("time asleep: %s, want at least the 2 s away and at most the %s since it fell asleep", away, time.Since(fell))
	}

	// The fault is still live; the learner repairs it.
	l, err := m2.Lab("rbac")
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Target{Config: cfg, Provider: p, Cluster: s.Cluster, BinDir: bin})
	if err != nil {
		t.Fatal(err)
	}
	live, err := m2.load(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Solve(ctx, l, live.work.Attempt, nil); err != nil {
		t.Fatal(err)
	}
	var res *CheckResult
	for deadline := time.Now().Add(4 * time.Minute); ; time.Sleep(time.Second) {
		if res, err = m2.Check(ctx, s.ID, nil); err != nil {
			t.Fatal(err)
		}
		if res.Passed || time.Now().After(deadline) {
			break
		}
		for _, r := range res.Report.Results {
			if !r.Passed {
				t.Logf("%s after the repair: %s: %s", time.Since(back).Round(time.Second), r.Kind, r.Reason)
			}
		}
	}
	if !res.Passed {
		t.Fatalf("after the repair: %+v", res.Report)
	}
	if !res.T1.After(back) {
		t.Fatalf("T1 %v, want after the learner came back at %v", res.T1, back)
	}
	want := (res.T1.Sub(t0) - away).Round(time.Millisecond)
	if got := res.Recovery.Duration(); got < want-time.Millisecond || got > want+time.Millisecond {
		t.Errorf("time to recovery: got %s, want T1 − T0 less the %s asleep = %s", got, away, want)
	}
	t.Logf("T1 − T0 %s, asleep %s, time to recovery %s", res.T1.Sub(t0).Round(time.Millisecond), away.Round(time.Millisecond), res.Recovery.Duration())

	// Looks are written at most every seenEvery; a sleep shorter than
	// that still counts the latest look, written or not.
	for range 2 {
		if _, err := m2.Wake(ctx, s.ID, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1200 * time.Millisecond)
	}
	if slept, err := m2.Sleep(ctx, SleepOptions{Freeze: 2 * time.Second}); err != nil || len(slept) > 0 {
		t.Fatalf("looked at 1.2 s ago, freezing after 2 s: slept %v (%v), want none", slept, err)
	}

	// Asleep frozen when the machine restarts: the frozen processes and
	// their group are gone, the session still says frozen, and its next
	// request starts the cluster again from its directory.
	if slept, err := m2.Sleep(ctx, SleepOptions{Freeze: time.Nanosecond}); err != nil || len(slept) != 1 {
		t.Fatalf("completed, nobody looking: slept %v (%v), want the session frozen", slept, err)
	}
	if err := p.Stop(ctx, s.Cluster); err != nil { // what the restart did
		t.Fatal(err)
	}
	if woke, err = m2.Wake(ctx, s.ID, nil); err != nil || woke.Asleep != nil {
		t.Fatalf("woken after the machine restarted: %v (asleep %+v)", err, woke)
	}
	if cs, err := p.Status(ctx, s.Cluster); err != nil || cs.State != cluster.StateRunning {
		t.Errorf("woken after the machine restarted: the cluster is %s (%v), want running", cs.State, err)
	}
	if _, err := admin.CoreV1().ConfigMaps("default").Get(ctx, "mine", metav1.GetOptions{}); err != nil {
		t.Errorf("woken after the machine restarted: the learner's ConfigMap: %v", err)
	}
}

// TestWarmSessionWakesWhenClaimed: a warm session nobody claimed for a
// while is frozen; the learner's start that claims it hands it over awake.
func TestWarmSessionWakesWhenClaimed(t *testing.T) {
	ctx := t.Context()
	opts, p := sleepOptions(t)
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	warm, err := m.Prepare(ctx, "", "rbac", nil, nil)
	if warm != nil {
		defer m.Stop(context.WithoutCancel(ctx), warm.ID, "", nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	if slept, err := m.Sleep(ctx, SleepOptions{Freeze: time.Nanosecond, Stop: time.Nanosecond}); err != nil || len(slept) != 1 {
		t.Fatalf("warm, nobody looking: slept %v (%v), want it frozen", slept, err)
	}
	if st, err := m.Status(ctx, warm.ID); err != nil || st.Asleep == nil || st.Asleep.Stopped {
		t.Fatalf("warm: asleep %+v (%v), want frozen, never stopped", st.Asleep, err)
	}
	got, err := m.Start(ctx, StartOptions{Learner: "bob", Lab: "rbac"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != warm.ID || got.Asleep != nil {
		t.Fatalf("claimed: session %s asleep %+v; want %s, awake", got.ID, got.Asleep, warm.ID)
	}
	if cs, err := p.Status(ctx, got.Cluster); err != nil || cs.State != cluster.StateRunning {
		t.Errorf("claimed: the cluster is %s (%v), want running (its API server answers)", cs.State, err)
	}
}

// TestMakeRoomAndAdmittedWake: a learner waits for room on a full machine.
// The session nobody has looked at for longest gives its room, never one a
// page follows; its learner comes back later, and the wake from disk waits
// its turn for room as a start does, leaving the session asleep if they
// give up waiting.
func TestMakeRoomAndAdmittedWake(t *testing.T) {
	ctx := t.Context()
	opts, p := sleepOptions(t)
	var (
		admits  atomic.Int64
		release = make(chan struct{})
		doneOK  = make(chan bool, 1)
		awakeAt = make(chan bool, 1) // whether the store says awake when the admission ends
	)
	st := opts.Store.(*store.DB)
	var bobID string
	opts.WakeAdmit = func(ctx context.Context, _ Progress) (func(bool), error) {
		admits.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return func(ok bool) {
			rec, err := st.Session(context.Background(), bobID)
			awakeAt <- err == nil && asleepOf(rec.Data) == nil
			doneOK <- ok
		}, nil
	}
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, learner := range []string{"alice", "bob"} {
		s, err := m.Start(ctx, StartOptions{Learner: learner, Lab: "rbac"}, nil)
		if s != nil {
			ids = append(ids, s.ID)
			defer m.Stop(context.WithoutCancel(ctx), s.ID, "", nil)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	alice, bob := ids[0], ids[1]
	bobID = bob
	// Alice, who started first, looks at her page now: bob is the one
	// nobody has looked at for longest.
	if _, err := m.Wake(ctx, alice, nil); err != nil {
		t.Fatal(err)
	}
	if id, err := m.MakeRoom(ctx, RoomOptions{After: time.Hour}); err != nil || id != "" {
		t.Fatalf("nobody unseen for an hour: made room of %q (%v), want none", id, err)
	}
	if id, err := m.MakeRoom(ctx, RoomOptions{After: time.Nanosecond}); err != nil || id != bob {
		t.Fatalf("made room of %q (%v), want bob's %s, unseen for longest", id, err, bob)
	}
	bs, err := m.Status(ctx, bob)
	if err != nil {
		t.Fatal(err)
	}
	if bs.Asleep == nil || !bs.Asleep.Stopped {
		t.Fatalf("bob's session after making room: asleep %+v, want stopped", bs.Asleep)
	}
	if cs, err := p.Status(ctx, bs.Cluster); err != nil || cs.State != cluster.StateStopped {
		t.Fatalf("bob's cluster after making room: %s (%v), want stopped", cs.State, err)
	}
	// Alice's page is open: no room is made of her session, nor of bob's
	// again.
	if id, err := m.MakeRoom(ctx, RoomOptions{After: time.Nanosecond, Watched: func(id string) bool { return id == alice }}); err != nil || id != "" {
		t.Fatalf("alice watched, bob stopped: made room of %q (%v), want none", id, err)
	}

	// Bob comes back, waits for room, and leaves the page: still asleep.
	waitCtx, cancel := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() { _, err := m.Wake(waitCtx, bob, nil); left <- err }()
	for admits.Load() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-left; err == nil {
		t.Fatalf("a wake given up while waiting for room: got no error")
	}
	if cs, err := p.Status(ctx, bs.Cluster); err != nil || cs.State != cluster.StateStopped {
		t.Fatalf("bob left the queue: his cluster is %s (%v), want still stopped", cs.State, err)
	}
	if s, err := m.Status(ctx, bob); err != nil || s.Asleep == nil || !s.Asleep.Stopped {
		t.Fatalf("bob left the queue: asleep %+v (%v), want still stopped", s.Asleep, err)
	}

	// He comes back again and waits his turn: his cluster starts only once
	// admitted, and the admission ends once the session is saved awake.
	woke := make(chan error, 1)
	go func() { _, err := m.Wake(ctx, bob, nil); woke <- err }()
	for admits.Load() < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	if cs, err := p.Status(ctx, bs.Cluster); err != nil || cs.State != cluster.StateStopped {
		t.Fatalf("bob waits for room: his cluster is %s (%v), want stopped until admitted", cs.State, err)
	}
	close(release)
	if err := <-woke; err != nil {
		t.Fatal(err)
	}
	if !<-awakeAt || !<-doneOK {
		t.Errorf("the wake's admission ended before the session was saved awake, or not as a success")
	}
	if cs, err := p.Status(ctx, bs.Cluster); err != nil || cs.State != cluster.StateRunning {
		t.Errorf("bob woke: his cluster is %s (%v), want running", cs.State, err)
	}
}

// sleepOptions are a Manager's options on a store of the test's and an
// embedded provider whose clusters are in cells with budgets: clusters
// that can sleep.
func sleepOptions(t *testing.T) (Options, *cluster.Provider) {
	t.Helper()
	bin := labBinDir(t)
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := cluster.NewProvider(cluster.ProviderWithBudget(budget.Default), cluster.ProviderWithEmbedded(bin, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	walltest.Require(t, walltest.Budget, walltest.Contained(p.Contained()))
	return Options{Store: st, Provider: p, Course: shippedCourse(t), BinDir: bin, LockDir: t.TempDir()}, p
}
