package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"oplab.dev/oplab/internal/board"
	"oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/web"
)

// TestBrowserInstructorBoard: in Chromium, an instructor signs in, opens
// her class and sees a row for its member, with the select box and the
// buttons of the actions the row allows; when the app reports an event of
// the member's session (the fault, then the recovery), the row changes
// without a reload, and its buttons go with the session's end of being
// live; the member's read-only view shows the timeline, all of it, read a
// page at a time. (internal/app/webapp's TestBrowserBoardActions presses
// each button on a real session.)
func TestBrowserInstructorBoard(t *testing.T) {
	app := newFakeApp()
	ts, _ := serveFake(t, app.config(Config{Console: fakeConsole{}, Web: web.FS}))

	var errs browsertest.Errors
	ctx := browser(t, errs.Listen)
	sh := newShots(t, "board")
	sh.step(t, ctx, "a wrong password is refused",
		chromedp.Navigate(ts.URL+"/instructor/login"),
		chromedp.WaitVisible(`#login-form`),
		chromedp.SendKeys(`#name`, "ada"),
		chromedp.SendKeys(`#password`, "nope"),
		browsertest.Loads(chromedp.Submit(`#login-form`)),
		chromedp.WaitVisible(`#login-error`),
		textContains("#login-error", "Wrong name or password"))
	sh.step(t, ctx, "the instructor signs in and sees her classes",
		chromedp.SendKeys(`#password`, "ada-password"),
		browsertest.Loads(chromedp.Submit(`#login-form`)),
		chromedp.WaitVisible(`#classes tr[data-class="morning"]`),
		sh.take("classes"))
	sh.step(t, ctx, "the class's board has a row for its member",
		chromedp.Click(`#classes tr[data-class="morning"] a`),
		chromedp.WaitVisible(`#grid-body tr[data-session="bob-1"]`),
		textContains(`#grid-body tr[data-session="bob-1"] .state`, "in the exercise"),
		textContains(`#board-live`, "live"),
		textContains(`#grid-body tr[data-session="bob-1"] td.current .fault`, "fault live 2m"),
		chromedp.WaitVisible(`#grid-body tr[data-session="bob-1"] input[data-select]`),
		chromedp.WaitVisible(`#grid-body tr[data-session="bob-1"] button[data-act="reset"]`),
		chromedp.WaitVisible(`#grid-body tr[data-session="bob-1"] button[data-act="extend"]`),
		chromedp.WaitVisible(`#grid-body tr[data-session="bob-1"] button[data-act="end"]`),
		sh.take("board"))
	// The app reports the member's recovery: the row's cell shows it
	// passed, with no reload of the page.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded = true`)); err != nil {
		t.Fatal(err)
	}
	app.classEvent("morning", "bob-1", "completed", board.Cell{Score: 5, Total: 5, Passed: true, Hints: 1},
		Update{Kind: "recovered", Exercise: "delete-primary", Message: "recovered"})
	sh.step(t, ctx, "the row changes live",
		textContains(`#grid-body tr[data-session="bob-1"] .state`, "completed"),
		textContains(`#grid-body tr[data-session="bob-1"] td.passed-count`, "1"),
		textContains(`#grid-body tr[data-session="bob-1"] td.ok`, "5/5"),
		chromedp.Poll[chromedp.Void](`window.notReloaded === true && !document.querySelector('#grid-body .fault')`),
		// Completed, the session is no longer live: nothing to select or press.
		chromedp.WaitNotPresent(`#grid-body tr[data-session="bob-1"] input[data-select]`),
		chromedp.WaitNotPresent(`#grid-body tr[data-session="bob-1"] button[data-act]`),
		sh.take("changed"))
	sh.step(t, ctx, "the member's session, read-only",
		chromedp.Click(`#grid-body tr[data-session="bob-1"] th a`),
		chromedp.WaitVisible(`#timeline li`),
		textContains(`#timeline`, "ready → in-exercise"),
		// The whole timeline, read a page at a time, each event once.
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('#timeline li').length === %d`, fakeTimeline)),
		textContains(`#learner-state`, "completed"),
		sh.take("learner"))
	if l := errs.List(); len(l) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(l, "\n"))
	}
}
