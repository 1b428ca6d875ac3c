package engine

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/labs"
)

// TestSelfTestAllLabs is `oplab lab selftest --all` in `make test`: every
// shipped lab must pass its steady state before chaos, fail its goals right
// after the chaos (a goal set never passes on the untouched broken state)
// and pass them after the reference solution.
//
// The labs share one embedded cluster, torn down (Teardown) between labs,
// which tests Teardown too: a lab left behind would make the next one's
// goals pass early. Measured on 2 cores: 103 s and 51 s of CPU for the six
// labs on one cluster, against 112 s and 78 s of CPU with a cluster per lab
// in parallel subtests (which also raced on cluster start-up once).
func TestSelfTestAllLabs(t *testing.T) {
	t.Parallel()
	ids, err := lab.IDs(labs.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 6 {
		t.Fatalf("got %d shipped labs, want at least 6", len(ids))
	}
	e, _ := newEngine(t)
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			l := shipped(t, id)
			ctx := testContext(t, 5*time.Minute)
			defer func() {
				for range 2 { // idempotent
					if err := e.Teardown(ctx, l, nil); err != nil {
						t.Errorf("tear down: %v", err)
					}
				}
			}()
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
	if _, err := e.cs.StorageV1().StorageClasses().Get(t.Context(), "fast-ssd", metav1.GetOptions{}); err == nil {
		t.Errorf("after the storage lab's teardown: got StorageClass fast-ssd, want it deleted")
	}
}
