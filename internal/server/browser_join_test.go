package server

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/web"
)

// TestBrowserJoinsAClass: in Chromium, a learner goes from the sign-in
// page to the join form, mistypes the class code (the page says so and
// keeps the name), joins, is shown the rejoin code once, and sees only
// the class's labs in its order; a second browser profile (another
// device) rejoins with that code and sees the same learner's catalogue,
// with the session the first started.
func TestBrowserJoinsAClass(t *testing.T) {
	app := newFakeApp()
	ts, _ := serveFake(t, app.config(Config{Console: fakeConsole{}, Web: web.FS}))

	var errs browsertest.Errors
	ctx := browser(t, errs.Listen)
	sh := newShots(t, "join")
	sh.step(t, ctx, "the sign-in page leads to the join form",
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(`#signin a[href="/join"]`),
		chromedp.Click(`#signin a[href="/join"]`),
		chromedp.WaitVisible(`#join-form`))
	sh.step(t, ctx, "a mistyped code is refused, the name kept",
		chromedp.SendKeys(`#code`, "MORNIG"),
		chromedp.SendKeys(`#name`, "Alice Kim"),
		chromedp.Submit(`#join-form`),
		chromedp.WaitVisible(`#join-error`),
		textContains("#join-error", "That code is not right."),
		chromedp.Poll[chromedp.Void](`document.querySelector('#name').value === 'Alice Kim'`),
		sh.take("wrong-code"))
	sh.step(t, ctx, "join and see the rejoin code",
		chromedp.SetValue(`#code`, "morning"),
		chromedp.Submit(`#join-form`),
		chromedp.WaitVisible(`#rejoin-code`),
		textContains("#joined-class", "morning"),
		textContains("#joined-name", "Alice Kim"),
		textContains("#join", "Write it down"),
		sh.take("joined"))
	code, err := chromedp.Run(ctx, chromedp.Text(`#rejoin-code`))
	if err != nil || strings.TrimSpace(code) == "" {
		t.Fatalf("read the rejoin code: got %q, %v", code, err)
	}
	sh.step(t, ctx, "the catalogue has the class's labs",
		chromedp.Click(`#to-labs`),
		chromedp.WaitVisible(`#labs li[data-lab]`),
		sh.take("catalogue"))
	if got, want := labsShown(t, ctx), []string{"rbac", "failover"}; !slices.Equal(got, want) {
		t.Errorf("labs shown: got %v, want %v", got, want)
	}
	// The learner starts rbac (the lab page's Start is tested on its own).
	if _, err := app.learning.Start(t.Context(), "learner-1", "rbac", "en", func(Update) {}); err != nil {
		t.Fatal(err)
	}

	other := browser(t, errs.Listen)
	sh.step(t, other, "another device rejoins with the personal code",
		chromedp.Navigate(ts.URL+"/join?rejoin=1"),
		chromedp.WaitVisible(`#rejoin-form`),
		chromedp.SendKeys(`#rejoin`, strings.ToLower(strings.TrimSpace(code))),
		chromedp.Submit(`#rejoin-form`),
		chromedp.WaitVisible(`#labs li[data-lab]`),
		textContains(`#labs li[data-lab="rbac"] .learner-state`, "In progress"),
		sh.take("rejoined"))
	if got, want := labsShown(t, other), []string{"rbac", "failover"}; !slices.Equal(got, want) {
		t.Errorf("labs shown on the other device: got %v, want %v", got, want)
	}
	if l := errs.List(); len(l) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(l, "\n"))
	}
}

// labsShown returns the ids of the labs on the catalogue page, in order.
func labsShown(t *testing.T, ctx context.Context) []string {
	t.Helper()
	ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#labs li[data-lab]')].map(li => li.dataset.lab)`))
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
