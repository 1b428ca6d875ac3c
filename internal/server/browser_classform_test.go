package server

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/web"
)

// TestBrowserClassFormOrdersLabs: in Chromium, the create form sends the
// labs ticked in the order the instructor arranged them with ↑ and ↓, and
// the other fields as typed.
func TestBrowserClassFormOrdersLabs(t *testing.T) {
	app := newFakeApp()
	ts, _ := serveFake(t, app.config(Config{Console: fakeConsole{}, Web: web.FS}))

	var errs browsertest.Errors
	ctx := browser(t, errs.Listen)
	sh := newShots(t, "classform")
	sh.step(t, ctx, "sign in and open the create form",
		chromedp.Navigate(ts.URL+"/instructor/login"),
		chromedp.SendKeys(`#name`, "ada"),
		chromedp.SendKeys(`#password`, "ada-password"),
		browsertest.Loads(chromedp.Submit(`#login-form`)),
		chromedp.WaitVisible(`#classes`),
		chromedp.Click(`#new-class summary`),
		chromedp.WaitVisible(`#new-class-form`))
	sh.step(t, ctx, "fill it in, rbac before failover",
		chromedp.SendKeys(`#new-name`, "noon"),
		chromedp.Click(`#new-class-form li[data-lab="failover"] input`),
		chromedp.Click(`#new-class-form li[data-lab="rbac"] input`),
		chromedp.Click(`#new-class-form li[data-lab="rbac"] button.up`),
		chromedp.SendKeys(`#new-capacity`, "12"),
		chromedp.SendKeys(`#new-timelimit`, "45m"),
		sh.take("filled"),
		chromedp.Click(`#new-class-form button[type="submit"]`))
	// The page moves on once the class is made: the app's record says
	// what the form sent.
	want := "create noon [rbac failover] 12 45m"
	var calls []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		calls = app.classroom.calls()
		if slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "create ") }) {
			break
		}
	}
	if !slices.Contains(calls, want) {
		t.Errorf("calls: got %q, want %q", calls, want)
	}
	if l := errs.List(); len(l) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(l, "\n"))
	}
}
