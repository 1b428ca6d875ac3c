package engine

import (
	"context"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/labs"
)

// newEngine returns an Engine on a fresh embedded cluster of the test.
func newEngine(t testing.TB) (*Engine, *clustertest.Cluster) {
	t.Helper()
	c := clustertest.New(t)
	e, err := New(Target{Config: c.Config, Provider: c.Provider, Cluster: c.Name, BinDir: clustertest.BinDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	return e, c
}

// shipped loads a lab of the course built into oplab.
func shipped(t testing.TB, id string) *lab.Lab {
	t.Helper()
	l, errs := lab.Load(labs.FS, id)
	if len(errs) > 0 {
		t.Fatalf("load lab %s: %v", id, errs)
	}
	return l
}

// testContext bounds a test's cluster work.
func testContext(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// logProgress logs each finished step.
func logProgress(t testing.TB) Progress {
	return func(s Step) {
		if s.Done {
			mark := "ok"
			if s.Err != nil {
				mark = "FAIL"
			}
			t.Logf("%-4s %s/%s %s: %s (%s)", mark, s.Exercise, s.Phase, s.Kind, s.Message, s.Elapsed.Round(time.Millisecond))
		}
	}
}

// failed lists the kinds of the failed results of r.
func failed(r Report) []string {
	var out []string
	for _, res := range r.Results {
		if !res.Passed {
			out = append(out, res.Kind)
		}
	}
	return out
}
