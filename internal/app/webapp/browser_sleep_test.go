package webapp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	bt "oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/internal/session"
)

// TestBrowserWakesASleepingSession: a learner breaks the rbac lab's
// cluster in Chromium (a fault the operator cannot mend by itself) and
// keeps the page open, and the session stays
// awake past its sleep time; they close the page, and the server's
// housekeeping puts it to sleep, frozen and then stopped. They come back
// to the lab's page: it shows the waking as a step, then the exercise with
// the fault still live, and the time the session slept is recorded for
// the fault's clock to leave out.
func TestBrowserWakesASleepingSession(t *testing.T) {
	const freeze, stop = 3 * time.Second, 6 * time.Second
	s := newSiteWith(t, ServerConfig{
		Sleep:             session.SleepOptions{Freeze: freeze, Stop: stop},
		HousekeepingEvery: 500 * time.Millisecond,
	})
	if !s.app.ProviderInfo().Capabilities.Sleeps {
		t.Skip("this machine's clusters cannot sleep: no cell with a control group (docs/security.md, the budget)")
	}
	var errs bt.Errors
	ctx := bt.New(t, errs.Listen)
	sh := bt.NewShots(t, "sleep-wake")
	step := func(name string, limit time.Duration, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sh.Step(t, ctx, limit, name, actions...)
	}
	status := func(id string) *session.Status {
		t.Helper()
		// Status, unlike a page's read, neither wakes a session nor says
		// that someone looked at it.
		st, err := s.app.Status(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}

	step("start the lab and break it", 3*time.Minute,
		chromedp.Navigate(s.signIn()),
		chromedp.Navigate(s.url+"/labs/rbac"),
		chromedp.WaitVisible(`#start:not([disabled])`),
		chromedp.Click(`#start`),
		chromedp.WaitVisible(`#break:not([disabled])`),
		chromedp.Click(`#break`),
		bt.TextContains("#clock", "Fault live for"))
	id := activeSession(t, s)

	time.Sleep(2 * stop) // the page open: someone looks at it
	if st := status(id); st.Asleep != nil {
		t.Fatalf("asleep %+v with its page open", st.Asleep)
	}

	step("close the page", 10*time.Second, chromedp.Navigate("about:blank"))
	left := time.Now()
	var asleep *session.Asleep
	for deadline := left.Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if asleep = status(id).Asleep; asleep != nil && asleep.Stopped {
			break
		}
	}
	if asleep == nil || !asleep.Stopped {
		t.Fatalf("a minute after the page closed: asleep %+v, want stopped", asleep)
	}
	t.Logf("asleep, stopped, %s after the page closed", time.Since(left).Round(100*time.Millisecond))

	time.Sleep(2 * time.Second) // away a while longer
	back := time.Now()
	step("come back: the page wakes the session and shows it as a step", 2*time.Minute,
		chromedp.Navigate(s.url+"/labs/rbac"),
		bt.TextContains(`#steps`, "Starting your cluster again from where you left it"),
		chromedp.WaitVisible(`#exercise-panel`),
		bt.TextContains("#clock", "Fault live for"),
		sh.Take("woken"))
	st := status(id)
	if st.Asleep != nil || st.State != session.InExercise {
		t.Fatalf("woken: state %s, asleep %+v; want the exercise, awake", st.State, st.Asleep)
	}
	// Asleep from asleep.Since until the page came back and woke it.
	if away := st.Attempt.Away.Duration(); away < back.Sub(asleep.Since) || away > time.Since(asleep.Since) {
		t.Errorf("woken: the attempt records %s asleep, want from when it fell asleep to the wake: between %s and %s",
			away, back.Sub(asleep.Since).Round(time.Millisecond), time.Since(asleep.Since).Round(time.Millisecond))
	}
	tl, err := s.app.Timeline(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range tl.Events {
		// Before the page closed, a look is written at most every 15 s,
		// more than this test's Freeze: the session may have slept and
		// been woken by the open page's next read. What is judged is what
		// closing the page did.
		if ev.At.Before(left) {
			continue
		}
		if ev.Kind == session.KindSleep || ev.Kind == session.KindWake {
			kinds = append(kinds, ev.Kind)
		}
	}
	// Frozen, then stopped; or stopped at once when the page's last
	// look was already longer ago than Stop (a look is written at most
	// every 15 s).
	if got := strings.Join(kinds, " "); got != "sleep sleep wake" && got != "sleep wake" {
		t.Errorf("the timeline's sleep and wake events: %v, want the sleeps, then one wake", kinds)
	}
	if e := errs.List(); len(e) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(e, "\n"))
	}
}
