package server

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"oplab.dev/oplab/web"
)

// TestBrowserLogAfterServerRestart: when the server restarts, the page's
// live log reconnects by itself and, the stream having started over,
// shows each line once rather than twice; lines after the restart arrive.
func TestBrowserLogAfterServerRestart(t *testing.T) {
	app, streams := newFakeApp(), newFakeStreams()
	lab := newScriptedLearning(app.learning, streams)
	lab.sessions = map[string]*SessionRef{"alice-1": {ID: "alice-1", Learner: "local", Lab: "failover", State: "ready"}}
	streams.log("info", "PostgresCluster/default/prod-db", "reconcile: 3/3 replicas ready")
	streams.log("info", "PostgresCluster/default/prod-db", "in sync, nothing to do")
	cfg := app.config(Config{Console: fakeConsole{}, Streams: streams, Web: web.FS})
	cfg.Learning = lab
	ts, s := serveFake(t, cfg)
	ctx := browser(t, nil)
	sh := newShots(t, "log-restart")
	count := `document.querySelectorAll('#log li').length`
	sh.step(t, ctx, "the log shows its lines",
		chromedp.Navigate(s.SignInURL(ts.URL)),
		chromedp.Navigate(ts.URL+"/labs/failover"),
		chromedp.Poll[chromedp.Void](count+` === 2`))
	streams.restart()
	time.Sleep(time.Second) // the page notices the drop and reconnects
	streams.log("info", "PostgresCluster/default/prod-db", "after the restart")
	sh.step(t, ctx, "after the restart, each line once",
		textContains("#log", "after the restart"),
		sh.take("log-after-restart"))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](count)); err != nil || n != 3 {
		t.Errorf("log lines after the restart: got %d (%v), want 3: the two before, once, and the new one", n, err)
	}
}
