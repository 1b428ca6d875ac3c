package webapp

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"oplab.dev/oplab/internal/app"
	bt "oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/oplog"
)

// TestKindLogPanel is the operator's log of a kind session, where the
// operator runs as a pod: the lab page's log panel streams its reconcile
// passes (in Chromium), `oplab logs` reads the same lines through
// App.OperatorLog, and when the session stops its log is kept for the
// debrief. Gated like every kind test (clustertest.RequireKind).
func TestKindLogPanel(t *testing.T) {
	clustertest.RequireKind(t)
	nodeImage, kindConfig := clustertest.KindEnv()
	s := newSiteOf(t, app.Config{Provider: app.Kind, KindNodeImage: nodeImage, KindConfig: kindConfig}, ServerConfig{})
	var errs bt.Errors
	ctx := bt.New(t, errs.Listen)
	sh := bt.NewShots(t, "kind-log-panel")
	sh.Step(t, ctx, 12*time.Minute, "start the failover lab on kind",
		chromedp.Navigate(s.signIn()),
		chromedp.Navigate(s.url+"/labs/failover"),
		chromedp.WaitVisible(`#start:not([disabled])`),
		chromedp.Click(`#start`),
		chromedp.WaitVisible(`#exercise-panel`))
	sh.Step(t, ctx, 3*time.Minute, "the operator pod's passes stream to the log panel",
		chromedp.WaitVisible(`#log > li.reconcile`),
		sh.Take("log"))
	if got := eval[string](t, ctx, `document.getElementById('log-status').textContent`); got != "" {
		t.Errorf("log status: got %q, want none (streaming)", got)
	}

	bg := context.Background()
	id, err := s.app.Resolve(bg, app.LocalLearner, "failover", "")
	if err != nil {
		t.Fatal(err)
	}
	src, err := s.app.OperatorLog(bg, id)
	if err != nil {
		t.Fatalf("operator log of a kind session: %v", err)
	}
	passes := 0
	if err := src.Lines(bg, false, func(l oplog.Line) error {
		if oplog.ParseEntry(l).Pass != nil {
			passes++
		}
		return nil
	}); err != nil {
		t.Fatalf("read the operator pod's log: %v", err)
	}
	if passes == 0 {
		t.Errorf("the operator pod's log as oplab logs reads it: no reconcile pass")
	}

	// The replay draws a line's time, object, message and error (not its
	// pass); after the stop deletes the cluster it reads the copy kept of
	// the pod's log, which holds every line the live replay had.
	live, err := s.app.Debrief(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.app.Stop(bg, id, "the test ended", nil); err != nil {
		t.Fatal(err)
	}
	d, err := s.app.Debrief(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	if d.LogSource != app.LogRecorded || len(live.Log) == 0 || len(d.Log) < len(live.Log) {
		t.Fatalf("debrief after the stop: log from %q with %d lines, want the kept copy with at least the %d lines of the live replay", d.LogSource, len(d.Log), len(live.Log))
	}
	if got, want := d.Log[len(live.Log)-1], live.Log[len(live.Log)-1]; got.Message != want.Message || !got.Time.Equal(want.Time) {
		t.Errorf("kept line %d: got %q at %v, want %q at %v as the live replay had it", len(live.Log), got.Message, got.Time, want.Message, want.Time)
	}
	if l := errs.List(); len(l) > 0 {
		t.Errorf("the page logged errors: %v", l)
	}
}
