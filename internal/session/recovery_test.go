package session

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/store"
)

// TestRecoveryMoment runs the failover lab on a real cluster with the real
// operator. In the first exercise nothing watches: the check, run seconds
// after the cluster recovered, reports T1 from the cluster's evidence, at
// the recovery and not at the check. In the second a Watcher runs, and T1
// is the moment it saw the goals hold. The test sees the recovery itself
// by polling the goals.
func TestRecoveryMoment(t *testing.T) {
	bin := labBinDir(t)
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := cluster.NewProvider(cluster.ProviderWithEmbedded(bin, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Store: st, Provider: p, Course: shippedCourse(t), BinDir: bin, LockDir: t.TempDir()}
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Start(ctx, StartOptions{Learner: "alice", Lab: "failover"}, nil)
	if s != nil {
		// A defer, not a Cleanup: it runs before the store closes, and
		// with a context that t has not canceled yet.
		defer func() {
			if _, err := m.Stop(context.WithoutCancel(ctx), s.ID, "", nil); err != nil {
				t.Errorf("stop: %v", err)
			}
		}()
	}
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.Lab("failover")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.RESTConfig(s.Cluster)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(engine.Target{Config: cfg, Provider: p, Cluster: s.Cluster, BinDir: bin})
	if err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		exercise string
		watch    bool
		want     string
	}{
		{"delete-primary", false, T1Evidence},
		{"force-delete", true, T1Watched},
	} {
		t.Run(tt.exercise, func(t *testing.T) {
			var bg *Watcher
			if tt.watch {
				bg = m.Watcher(WatchOptions{Interval: 100 * time.Millisecond})
				bg.Start(ctx)
				defer bg.Stop()
			}
			chaos, err := m.Chaos(ctx, s.ID, tt.exercise, nil)
			if err != nil {
				t.Fatal(err)
			}
			a := chaos.Attempt
			live, err := m.load(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			seen := recovered(t, e, l.Exercises[exerciseIndex(l, tt.exercise)].Goals, live.work.Attempt)
			if tt.watch {
				checkWatcherPace(t, m, s.ID, bg, seen)
			}
			if tt.exercise == "delete-primary" {
				// The learner asks for a hint before checking.
				checkHintUnlock(t, m, opts, s.ID)
			}
			time.Sleep(4 * time.Second) // the learner looks around, then checks
			before := time.Now()
			res, err := m.Check(ctx, s.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Passed || res.T1Source != tt.want {
				t.Fatalf("check: passed %v, T1 source %q; want passed, %q\n%+v", res.Passed, res.T1Source, tt.want, res.Report)
			}
			// Goals seen to hold in a row — by the Watcher, or by the
			// cluster's records of the recovery seconds before — need one
			// more pass each.
			for _, r := range res.Report.Results {
				if r.Polls != 1 {
					t.Errorf("check %s: %d polls; want 1, the goals held for seconds before the check", r.Kind, r.Polls)
				}
			}
			// The goals held at seen, and not at the poll 100 ms before;
			// the bounds allow for records kept to the second and for
			// polls a loaded machine delays.
			if res.T1.Before(a.T0) || res.T1.After(seen.Add(2*time.Second)) || res.T1.Before(seen.Add(-2*time.Second)) {
				t.Errorf("T1: got %s, want between T0 %s and the recovery the test saw at %s (within its records' precision)",
					clock(res.T1), clock(a.T0), clock(seen))
			}
			if !res.T1.Before(before.Add(-time.Second)) {
				t.Errorf("T1: got %s, the check began at %s; want the recovery, seconds before", clock(res.T1), clock(before))
			}
			if got, want := res.Recovery.Duration(), res.T1.Sub(a.T0).Round(time.Millisecond); got != want {
				t.Errorf("time to recovery: got %s, want T1 − T0 = %s", got, want)
			}
			t.Logf("T0 %s, recovered (seen) %s, T1 %s (%s) %v, check %s", clock(a.T0), clock(seen), clock(res.T1), res.T1Source, res.T1Evidence, clock(before))
		})
	}
}

// checkWatcherPace, on a session that bg watches, which recovered at seen:
// a Watcher that first polls it seconds after the recovery sees its run
// of passes through in the same poll of the session and records T1, placed
// at the recovery by the cluster's records; once recorded, it polls that
// session again only after HeldInterval; and it does not poll a session
// that is busy, whose learner's own request is at work on it. bg runs
// again after.
func checkWatcherPace(t *testing.T, m *Manager, id string, bg *Watcher, seen time.Time) {
	t.Helper()
	ctx := t.Context()
	bg.Stop()
	defer bg.Start(ctx)
	s, err := m.load(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	started := s.work.Attempt.Started
	m.Watcher(WatchOptions{}).record(ctx, id, started, time.Time{}) // what bg saw, forgotten
	time.Sleep(3 * time.Second)                                     // a sweep of a loaded class

	w := m.Watcher(WatchOptions{HeldInterval: time.Hour})
	began := time.Now()
	w.Poll(ctx)
	if s, err = m.load(ctx, id); err != nil {
		t.Fatal(err)
	}
	if t1 := s.work.Attempt.T1; s.work.T1Source != T1Watched || t1.After(seen.Add(2*time.Second)) || t1.Before(seen.Add(-2*time.Second)) {
		t.Fatalf("after one poll, begun at %s, of a session that recovered at %s: T1 %s (%q); want it watched, at the recovery (within its records' precision)",
			clock(began), clock(seen), clock(t1), s.work.T1Source)
	}
	polled := w.runs[id].polled
	if polled.IsZero() {
		t.Fatal("the Watcher never polled the session")
	}
	w.Poll(ctx)
	if got := w.runs[id].polled; !got.Equal(polled) {
		t.Errorf("a session whose T1 is recorded was polled again at %s, %s after %s: want not within the held interval (1h)",
			clock(got), got.Sub(polled), clock(polled))
	}

	busy := m.Watcher(WatchOptions{})
	// The running Watcher locks the session for a moment when it records.
	unlock, ok := m.tryLock(id)
	for i := 0; !ok && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
		unlock, ok = m.tryLock(id)
	}
	if !ok {
		t.Fatal("the session stays locked")
	}
	busy.Poll(ctx)
	unlock()
	if r, ok := busy.runs[id]; ok {
		t.Errorf("a busy session was polled: %+v", r)
	}
	busy.Poll(ctx)
	if r := busy.runs[id]; r.polled.IsZero() {
		t.Errorf("the session, no longer busy, was not polled: %+v", r)
	}
}

// checkHintUnlock asks for a hint of the failover exercise (hints: a
// nudge on the FailingOver event, then one after 1m) and expects the
// nudge, unlocked by the event, and the next hint due by time. Another
// Manager on the same store, as a second process would, sees the same
// unlock, and the timeline records it.
func checkHintUnlock(t *testing.T, m *Manager, opts Options, id string) {
	t.Helper()
	ctx := t.Context()
	res, err := m.Hint(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !res.New || len(res.Shown) != 1 || res.Shown[0].Tier != "nudge" {
		t.Fatalf("hint after the failover: got new %v, shown %+v; want the nudge, new", res.New, res.Shown)
	}
	u := res.Shown[0].Unlock
	if u == nil || u.Kind != UnlockEvent || u.Reason != "FailingOver" || u.Seen == "" {
		t.Errorf("unlock: got %+v, want the FailingOver event with its message", u)
	}
	if n := res.Next; n == nil || n.Due || n.Left <= 0 || n.Left.Duration() > time.Minute || len(n.Evidence) != 0 {
		t.Errorf("next: got %+v, want the 1m hint, not due, with time left and no evidence", n)
	}

	other, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := other.Hint(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if again.New || len(again.Shown) != 1 || again.Shown[0].Unlock == nil || *again.Shown[0].Unlock != *u {
		t.Errorf("hint from another manager: got new %v, shown %+v; want the nudge again, unlocked by %+v", again.New, again.Shown, u)
	}
	evs, err := timeline(ctx, m, id)
	if err != nil {
		t.Fatal(err)
	}
	var recorded *HintUnlock
	for _, ev := range evs {
		if ev.Kind == KindHint && ev.Hint != nil {
			recorded = ev.Hint.Unlock
		}
	}
	if recorded == nil || *recorded != *u {
		t.Errorf("timeline: got hint unlock %+v, want %+v", recorded, u)
	}
}

// recovered polls the goals, each once per poll, every 100 ms, and
// returns the moment of the first poll at which all held.
func recovered(t *testing.T, e *engine.Engine, goals []lab.Check, a *engine.Attempt) time.Time {
	t.Helper()
	goals, _ = oncePerPoll(goals)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		rep, err := e.RunChecks(t.Context(), a, goals, engine.CheckOptions{Timeout: time.Nanosecond})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Passed {
			return rep.At
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the cluster did not recover within 2 minutes")
	return time.Time{}
}

func clock(t time.Time) string { return t.Local().Format("15:04:05.000") }
