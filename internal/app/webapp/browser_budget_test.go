package webapp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"k8s.io/client-go/tools/clientcmd"

	"oplab.dev/oplab/internal/app"
	bt "oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/walltest"
)

// TestBrowserOverBudget is the learner who makes their cluster hold more
// than its share, in headless Chromium: the lab page says what their
// cluster takes of its budget; once the kernel stops a process of it the
// page says what happened and what to do, and Reset gives them a new,
// working cluster, on which the exercise can begin.
func TestBrowserOverBudget(t *testing.T) {
	s := newSiteOf(t, app.Config{Budget: budget.Budget{Memory: 768 << 20, Etcd: 1 << 30, Disk: 3 << 30}}, ServerConfig{})
	walltest.Require(t, walltest.Budget, walltest.Contained(s.app.Contained()))
	var errs bt.Errors
	ctx := bt.New(t, errs.Listen)
	sh := bt.NewShots(t, "over-budget")
	run := func(name string, limit time.Duration, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sh.Step(t, ctx, limit, name, actions...)
	}
	run("start the lab", 3*time.Minute,
		chromedp.Navigate(s.signIn()),
		chromedp.WaitVisible(`#labs li[data-lab="failover"]`),
		chromedp.Navigate(s.url+"/labs/failover"),
		chromedp.WaitVisible(`#start:not([disabled])`),
		chromedp.Click(`#start`),
		chromedp.WaitVisible(`#exercise-panel`),
		bt.TextContains("#budget", "of 768 MiB"),
	)
	if !eval[bool](t, ctx, `document.querySelector('#trouble').hidden`) {
		t.Fatal("a new cluster's page shows a budget trouble")
	}
	id := activeSession(t, s)
	path, err := s.app.KubeconfigPath(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The learner's worst: pods with large environments until their cell
	// is full (its resident memory at the ceiling) or the kernel stops a
	// process of it.
	if err := clustertest.Flood(fctx, cfg, func() bool {
		st, err := s.app.Status(fctx, id)
		return err == nil && st.Budget != nil && st.Budget.Trouble != nil
	}); err != nil {
		t.Fatal(err)
	}
	if st, err := s.app.Status(context.Background(), id); err == nil && st.Budget != nil {
		t.Logf("the cell at its bound: %+v, trouble %+v", st.Budget.Usage, st.Budget.Trouble)
	}
	run("the page says what happened and what to do", time.Minute,
		chromedp.WaitVisible(`#trouble`),
		bt.TextContains("#trouble", "used all of its memory (768 MiB)"),
		bt.TextContains("#trouble", "reset the exercise for a new cluster"),
		chromedp.WaitVisible(`#reset:not([disabled])`),
		sh.Take("trouble"),
	)
	run("reset gives a working cluster", 5*time.Minute,
		chromedp.Click(`#reset`),
		chromedp.WaitNotVisible(`#trouble`),
		chromedp.WaitVisible(`#break:not([disabled])`),
	)
	st, err := s.app.Status(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Budget == nil || st.Budget.Trouble != nil || st.Budget.OOMKills != 0 || !st.ClusterLive {
		t.Errorf("after the reset: %+v", st.Budget)
	}
	if msg := eval[string](t, ctx, `document.querySelector('#action-note').textContent`); strings.Contains(msg, "rror") {
		t.Errorf("the page shows an error after the reset: %q", msg)
	}
	if l := errs.List(); len(l) > 0 {
		t.Errorf("the page reported errors: %q", l)
	}
}
