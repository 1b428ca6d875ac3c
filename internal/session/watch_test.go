package session

import (
	"testing"
	"time"

	"oplab.dev/oplab/internal/engine"
)

// TestWatcherLifetime: Stop ends the goroutine Start started and returns
// once it has ended; starting twice or stopping twice is harmless, and a
// stopped Watcher can start again.
func TestWatcherLifetime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	w := f.m.Watcher(WatchOptions{Interval: time.Millisecond})
	w.Stop() // not started
	for range 2 {
		w.Start(t.Context())
		w.Start(t.Context())
		done := make(chan struct{})
		go func() { w.Stop(); w.Stop(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Stop did not return: the watching goroutine did not end")
		}
	}
}

// TestWatcherSkips: sessions whose goals cannot count yet are not polled:
// a fault not confirmed, an operation under way. A session that would be
// polled needs its cluster, which this fixture lacks, so nothing is
// recorded either way; what is checked is that nothing is written.
func TestWatcherSkips(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	f.seed(t, "nofault", "failover", InExercise, 0, &engine.Attempt{Exercise: "delete-primary", Started: time.Now()})
	f.seed(t, "ready", "failover", Ready, 0, nil)
	w := f.m.Watcher(WatchOptions{})
	w.Poll(ctx)
	for _, id := range []string{"nofault", "ready"} {
		rec, _ := f.store.Session(ctx, id)
		if evs, _ := f.store.Events(ctx, id, 0, 1000); len(evs) != 0 || rec.Version != 1 {
			t.Errorf("session %s after a poll: %d events, version %d; want none written", id, len(evs), rec.Version)
		}
	}
	if len(w.runs) != 0 {
		t.Errorf("runs after a poll of sessions that cannot count: got %v, want none", w.runs)
	}
}

// TestSettleT1FromRecordsReadBefore: records read right before a check
// place T1 only when every goal held at its first evaluation, right after
// they were read; a goal that needed more polls came to hold later than
// the records knew, and its check reads them again.
func TestSettleT1FromRecordsReadBefore(t *testing.T) {
	t.Parallel()
	t0 := time.Now().Add(-time.Minute)
	records := &engine.Recovered{At: t0.Add(5 * time.Second), Evidence: []string{"event FailoverComplete"}}
	at := t0.Add(30 * time.Second)
	s := &live{work: work{Attempt: &engine.Attempt{Exercise: "x", Started: t0.Add(-time.Second), T0: t0}}}
	first := engine.Report{Passed: true, At: at, Results: []engine.Result{{Kind: "a", Passed: true, Polls: 1}, {Kind: "b", Passed: true, Polls: 1}}}
	if got := (&Manager{}).settleT1(t.Context(), nil, s, &first, records); got.Source != T1Evidence || !got.At.Equal(records.At) {
		t.Errorf("every goal at its first evaluation: got T1 %s (%s), want the records' %s", got.At, got.Source, records.At)
	}
	if first.Recovery != 5*time.Second {
		t.Errorf("time to recovery: got %s, want 5s", first.Recovery)
	}
	if firstPolls(&engine.Report{Passed: true, Results: []engine.Result{{Kind: "a", Passed: true, Polls: 1}, {Kind: "b", Passed: true, Polls: 3}}}) {
		t.Error("a goal polled three times: firstPolls says every goal held at its first evaluation")
	}
	if firstPolls(&engine.Report{Results: []engine.Result{{Kind: "a", Polls: 1}}}) {
		t.Error("a failed goal: firstPolls says every goal held")
	}
}
