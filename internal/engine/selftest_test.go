package engine

import (
	"testing"
	"time"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/labs"
)

// TestSelfTestAllLabs is `oplab lab selftest --all` in `make test`: every
// shipped lab, on an embedded cluster of its own, must pass its steady
// state before chaos, fail its goals right after the chaos (a goal set
// never passes on the untouched broken state) and pass them after the
// reference solution. The labs run in parallel: they mostly wait on the
// operator and the controllers, so on two cores this is faster than one
// shared cluster with a teardown between labs.
func TestSelfTestAllLabs(t *testing.T) {
	t.Parallel()
	ids, err := lab.IDs(labs.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 6 {
		t.Fatalf("got %d shipped labs, want at least 6", len(ids))
	}
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			l := shipped(t, id)
			e, _ := newEngine(t)
			ctx := testContext(t, 5*time.Minute)
			rep, err := e.SelfTest(ctx, l, logProgress(t))
			if err != nil {
				t.Fatalf("self-test: %v", err)
			}
			if got, want := len(rep.Exercises), len(l.Exercises); got != want && rep.Passed {
				t.Errorf("got %d exercises self-tested, want %d", got, want)
			}
			for _, ex := range rep.Exercises {
				if !ex.Passed {
					t.Errorf("exercise %s: %s", ex.ID, ex.Problem)
					continue
				}
				if ex.Broken.Passed || ex.Broken.Score >= ex.Broken.Total {
					t.Errorf("exercise %s: got broken-state score %d/%d, want less than full", ex.ID, ex.Broken.Score, ex.Broken.Total)
				}
				if !ex.Fixed.Passed || ex.Fixed.Score != ex.Fixed.Total {
					t.Errorf("exercise %s: got fixed score %d/%d, want full", ex.ID, ex.Fixed.Score, ex.Fixed.Total)
				}
				t.Logf("exercise %s passed in %s", ex.ID, ex.Elapsed.Round(time.Millisecond))
			}
			if !rep.Passed {
				t.Errorf("lab %s: got self-test failed, want passed", id)
			}
			t.Logf("lab %s: setup %s, total %s", id, rep.Setup.Round(time.Millisecond), rep.Elapsed.Round(time.Millisecond))
		})
	}
}
