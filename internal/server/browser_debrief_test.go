package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/web"
)

// TestBrowserDebriefScrubber: on the instructor's read-only view of a
// member's session, the replay draws the session's two and a half
// minutes; moving the scrubber shows the events, the checks and the
// operator's log as they stood at that moment (the fake debrief's).
func TestBrowserDebriefScrubber(t *testing.T) {
	app := newFakeApp()
	ts, _ := serveFake(t, app.config(Config{Console: fakeConsole{}, Web: web.FS}))

	var errs browsertest.Errors
	ctx := browser(t, errs.Listen)
	sh := newShots(t, "debrief")
	sh.step(t, ctx, "sign in and open the member's session",
		chromedp.Navigate(ts.URL+"/instructor/login"),
		chromedp.SendKeys(`#name`, "ada"),
		chromedp.SendKeys(`#password`, "ada-password"),
		browsertest.Loads(chromedp.Submit(`#login-form`)),
		chromedp.WaitVisible(`#classes`),
		chromedp.Navigate(ts.URL+"/instructor/classes/morning/sessions/bob-1"),
		chromedp.WaitVisible(`#scrubber:not([disabled])`),
		textContains(`#debrief-status`, "kept when the cluster was deleted"),
		chromedp.ScrollIntoView(`#debrief`),
		sh.take("end"))
	for _, tc := range []struct {
		name   string
		second int // of the session, -1: where the scrubber starts (the end)
		past   []string
		now    string
		checks []string
		log    int
		state  string
	}{
		{"at the end", -1, []string{"state", "chaos", "check", "console", "check", "recovered", "quiz"}, "quiz",
			[]string{"pass serviceEndpointsPrimary", "pass conditionTrue"}, 3, "delete-primary"},
		{"before the chaos", 30, []string{"state"}, "state", []string{"none"}, 1, "–"},
		{"after the failing check", 95, []string{"state", "chaos", "check"}, "check",
			[]string{"fail serviceEndpointsPrimary", "pass conditionTrue"}, 2, "delete-primary"},
		{"after the console command", 110, []string{"state", "chaos", "check", "console"}, "console",
			[]string{"fail serviceEndpointsPrimary", "pass conditionTrue"}, 2, "delete-primary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.second >= 0 {
				sh.step(t, ctx, "move the scrubber",
					chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
						const s = document.querySelector('#scrubber');
						s.value = String(%d * 1000);
						s.dispatchEvent(new Event('input', { bubbles: true }));
					})()`, tc.second)),
					chromedp.ScrollIntoView(`#debrief-at`),
					sh.take(strings.ReplaceAll(tc.name, " ", "-")))
			}
			got := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#debrief-events li.past')].map((li) => li.dataset.kind)`)
			if strings.Join(got, " ") != strings.Join(tc.past, " ") {
				t.Errorf("events up to then: got %q, want %q", got, tc.past)
			}
			if got := evalJS[string](t, ctx, `document.querySelector('#debrief-events li.now')?.dataset.kind ?? ''`); got != tc.now {
				t.Errorf("the moment's event: got %q, want %q", got, tc.now)
			}
			checks := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#debrief-checks li')].map((li) => (li.className + ' ' + (li.dataset.kind ?? '')).trim())`)
			if strings.Join(checks, ", ") != strings.Join(tc.checks, ", ") {
				t.Errorf("checks then: got %q, want %q", checks, tc.checks)
			}
			if got := evalJS[string](t, ctx, `document.querySelector('#debrief-log-count').dataset.count`); got != fmt.Sprint(tc.log) {
				t.Errorf("log lines up to then: got %s, want %d", got, tc.log)
			}
			if got := evalJS[int](t, ctx, `document.querySelectorAll('#debrief-log li').length`); got != tc.log {
				t.Errorf("log lines shown: got %d, want %d", got, tc.log)
			}
			if got := evalJS[string](t, ctx, `document.querySelector('#debrief-exercise').textContent`); got != tc.state {
				t.Errorf("exercise then: got %q, want %q", got, tc.state)
			}
		})
	}
	if l := errs.List(); len(l) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(l, "\n"))
	}
}

func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}
