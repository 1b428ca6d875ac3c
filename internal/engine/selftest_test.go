package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/labs"
	"oplab.dev/oplab/quizzes"
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
	selfTestLabs(t, e, ids, 5*time.Minute)
	if _, err := e.cs.StorageV1().StorageClasses().Get(t.Context(), "fast-ssd", metav1.GetOptions{}); err == nil {
		t.Errorf("after the storage lab's teardown: got StorageClass fast-ssd, want it deleted")
	}
}

// selfTestLabs self-tests the labs ids one after the other on e's cluster,
// tearing each down (twice: teardown is idempotent) before the next, and
// checks every exercise's report: steady state, broken state below full
// score, every shortcut refused (by the API server exactly when
// refusedByAPI says so), full score after the solution.
func selfTestLabs(t *testing.T, e *Engine, ids []string, perLab time.Duration) {
	t.Helper()
	for _, id := range ids {
		t.Run(id, func(t *testing.T) {
			l := shipped(t, id)
			if missing := lacks(e, l); len(missing) > 0 {
				t.Skipf("lab %s needs %v, which the %s provider lacks (its self-test runs on kind: make test-kind)", id, missing, e.t.Provider.Info().Name)
			}
			budget := perLab
			if l.LearnerWritesController() {
				// Each exercise builds and runs modules in the cell, and each
				// check is a scenario that waits for the controller: about
				// 2.5 min an exercise on kind, at LearnerControllerPace.
				budget = 15 * time.Minute
				if e.t.Provider.Info().Capabilities.RealContainers {
					budget = 30 * time.Minute
				}
			}
			ctx := testContext(t, budget)
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
			for i, ex := range rep.Exercises {
				if !ex.Passed {
					t.Errorf("exercise %s: %s", ex.ID, ex.Problem)
					continue
				}
				if ex.Broken.Passed || ex.Broken.Score >= ex.Broken.Total {
					t.Errorf("exercise %s: got broken-state score %d/%d, want less than full", ex.ID, ex.Broken.Score, ex.Broken.Total)
				}
				if got, want := len(ex.Shortcuts), len(l.Exercises[i].Shortcuts); got != want {
					t.Errorf("exercise %s: got %d shortcuts tried, want %d", ex.ID, got, want)
				}
				for _, sc := range ex.Shortcuts {
					if !sc.Refused || sc.Goals.Passed {
						t.Errorf("exercise %s: shortcut %s: got refused %v, goals passed %v, want refused", ex.ID, sc.ID, sc.Refused, sc.Goals.Passed)
					}
					// The learner (whose identity the shortcuts run with)
					// can take exactly the shortcuts refusedByAPI leaves
					// out: a fence that refused more would pass them here
					// without the goals ever judging them.
					if want := refusedByAPI[id+"/"+ex.ID+"/"+sc.ID]; (sc.API != "") != want {
						t.Errorf("exercise %s: shortcut %s: got refused by the API server %v (%s), want %v", ex.ID, sc.ID, sc.API != "", sc.API, want)
					}
				}
				if !ex.Fixed.Passed || ex.Fixed.Score != ex.Fixed.Total {
					t.Errorf("exercise %s: got fixed score %d/%d, want full", ex.ID, ex.Fixed.Score, ex.Fixed.Total)
				}
				t.Logf("exercise %s passed in %s", ex.ID, ex.Elapsed.Duration().Round(time.Millisecond))
			}
			if !rep.Passed {
				t.Errorf("lab %s: got self-test failed, want passed", id)
			}
			answerClusterQuestions(t, ctx, e, l)
			t.Logf("lab %s: setup %s, total %s", id, rep.Setup.Duration().Round(time.Millisecond), rep.Elapsed.Duration().Round(time.Millisecond))
		})
	}
}

// A shortcut the goals do not refuse fails the self-test, which names it;
// so does one that the check meant to refuse it lets through.
func TestSelfTestReportsAShortcutThatPasses(t *testing.T) {
	t.Parallel()
	src := `apiVersion: oplab.dev/v1alpha1
kind: Lab
id: leaky
title: {en: "Leaky", ko: "Leaky"}
summary: {en: "A lab whose goal a shortcut passes.", ko: "A lab whose goal a shortcut passes."}
lesson: [intro]
target: {cluster: prod-db, namespace: default}
setup:
- kind: installOperator
quiz: leaky
exercises:
- id: restart
  title: {en: "Restart", ko: "Restart"}
  instructions: {en: "Start the operator.", ko: "Start the operator."}
  timeLimit: 5m
  steadyState:
  - kind: operatorReady
  chaos:
  - kind: stopOperator
  faultConfirmed:
  - kind: operatorStopped
  goals:
  - kind: operatorReady
  hints:
  - {tier: nudge, after: 1m, text: {en: "Scale it.", ko: "Scale it."}}
  solution:
  - kind: startOperator
  shortcuts:
  - id: refused
    why: "the operator is stopped once more"
    steps: [{kind: stopOperator}]
    refusedBy: [operatorReady]
  - id: same-as-the-solution
    why: "the operator is started, as the solution does"
    steps: [{kind: startOperator}]
`
	l, errs := lab.Parse("labs/leaky/lab.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	e, _ := newEngine(t)
	ctx := testContext(t, 5*time.Minute)
	rep, err := e.SelfTest(ctx, l, logProgress(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed || len(rep.Exercises) != 1 {
		t.Fatalf("got passed %v with %d exercises, want failed on the one", rep.Passed, len(rep.Exercises))
	}
	ex := rep.Exercises[0]
	if len(ex.Shortcuts) != 2 || !ex.Shortcuts[0].Refused || ex.Shortcuts[1].Refused {
		t.Fatalf("got shortcuts %+v, want the first refused and the second not", ex.Shortcuts)
	}
	if want := "shortcut same-as-the-solution: wrongly passed"; !strings.Contains(ex.Problem, want) {
		t.Errorf("got problem %q, want it to contain %q", ex.Problem, want)
	}
}

// lacks returns the capabilities l requires that e's provider lacks.
func lacks(e *Engine, l *lab.Lab) []string {
	caps := e.t.Provider.Info().Capabilities
	have := map[string]bool{"realContainers": caps.RealContainers, "loadImages": caps.LoadImages,
		"disposable": caps.Disposable, "hostProcesses": caps.HostProcesses, "builds": caps.Builds}
	var out []string
	for _, r := range l.Requires {
		if !have[r] {
			out = append(out, r)
		}
	}
	return out
}

// answerClusterQuestions asks the engine the true answer of each cluster
// question of l's quiz, on the cluster the self-test left repaired: each
// must have one, a name or a number.
func answerClusterQuestions(t *testing.T, ctx context.Context, e *Engine, l *lab.Lab) {
	t.Helper()
	if l.Quiz == "" {
		return
	}
	q, errs := quiz.Load(quizzes.FS, l.Quiz)
	if len(errs) > 0 {
		t.Fatalf("quiz %s: %v", l.Quiz, errs)
	}
	for _, qq := range q.Questions {
		if qq.Type != quiz.Cluster {
			continue
		}
		got, err := e.Answer(ctx, *qq.Answer)
		if err != nil || strings.TrimSpace(got) == "" {
			t.Errorf("quiz %s, question %s: got answer %q (%v), want one from the repaired cluster", l.Quiz, qq.ID, got, err)
			continue
		}
		t.Logf("quiz %s, question %s: %s of %s is %q", l.Quiz, qq.ID, qq.Answer.Query, qq.Answer.Cluster, got)
	}
}
