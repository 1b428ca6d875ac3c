package app

import (
	"context"
	"fmt"
	"testing"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/session"
)

// BenchmarkOpen measures what every CLI command pays before it starts:
// loading and validating the course, opening the store, making the
// provider and the session manager.
func BenchmarkOpen(b *testing.B) {
	dir, bin := b.TempDir(), b.TempDir()
	for b.Loop() {
		a, err := Open(b.Context(), Config{DataDir: dir, BinDir: bin})
		if err != nil {
			b.Fatal(err)
		}
		a.Close()
	}
}

// BenchmarkStartFromWarmPool measures a learner's Start of the failover
// lab when the warm pool has a session ready: the time to hand it over
// (the preparation, a cold start, is outside the timer).
//
//	go test -run '^$' -bench StartFromWarmPool -benchtime 1x -count 5 ./internal/app/
func BenchmarkStartFromWarmPool(b *testing.B) {
	ctx := context.Background()
	a, err := Open(ctx, Config{DataDir: b.TempDir(), BinDir: clustertest.BinDir(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	n := 0
	for b.Loop() {
		b.StopTimer()
		warm, err := a.Sessions.Prepare(ctx, "", "failover", nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		n++
		learner := fmt.Sprintf("learner-%d", n)
		b.StartTimer()
		st, err := a.Sessions.Start(ctx, session.StartOptions{Learner: learner, Lab: "failover"}, nil)
		b.StopTimer()
		if err != nil || st.ID != warm.ID {
			b.Fatalf("start: got %v, %v; want the warm session %s", st, err, warm.ID)
		}
		if _, err := a.Sessions.Stop(ctx, st.ID, "the benchmark ended", nil); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
