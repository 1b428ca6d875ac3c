package webapp

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"oplab.dev/oplab/internal/app"
	bt "oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/session"
)

// TestBrowserBoardActions presses every button of the instructor's board,
// in headless Chromium against the real thing: Grace joins ada's class by
// its code, starts the failover lab and breaks it; on ada's board her live
// row has a select box, Reset, Extend and End. Ada resets the exercise,
// extends the session, ticks it and extends the selected, ends it, exports
// the class and closes it, and after each press Grace's session has
// changed as the application reads it and, where her page shows it, on
// her page (closed, the class has signed her out).
func TestBrowserBoardActions(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	if _, err := s.app.AddInstructor(ctx, "ada", "ada-password", false); err != nil {
		t.Fatal(err)
	}
	c, err := s.app.CreateClass(ctx, class.Actor{Name: "ada"}, class.Spec{Name: "morning", Labs: []string{"failover"}, TimeLimit: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var errs bt.Errors
	ada := bt.New(t, errs.Listen)
	sh := bt.NewShots(t, "board-actions")
	step := func(who context.Context, name string, limit time.Duration, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sh.Step(t, who, limit, name, append([]chromedp.Action[chromedp.Void]{front()}, actions...)...)
	}
	var gid string // Grace's session, once she started it
	status := func() *session.Status {
		t.Helper()
		st, err := s.app.Status(ctx, gid)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}

	grace := join(t, bt.New(t, errs.Listen), s, sh, c.JoinCode, "Grace")
	step(grace, "Grace starts the failover lab and breaks it", 3*time.Minute,
		chromedp.Navigate(s.url+"/labs/failover"),
		chromedp.WaitVisible(`#start:not([disabled])`),
		chromedp.Click(`#start`),
		chromedp.WaitVisible(`#break:not([disabled])`),
		chromedp.Click(`#break`),
		bt.TextContains("#clock", "Fault live for"))
	gid = graceSession(t, s)
	row := fmt.Sprintf(`#grid-body tr[data-session=%q]`, gid)
	step(ada, "the board shows Grace live, with her row's select box and buttons", time.Minute,
		chromedp.Navigate(s.url+"/instructor/login"),
		chromedp.SendKeys(`#name`, "ada"),
		chromedp.SendKeys(`#password`, "ada-password"),
		bt.Loads(chromedp.Submit(`#login-form`)),
		chromedp.WaitVisible(`#classes tr[data-class="morning"]`),
		chromedp.Navigate(s.url+"/instructor/classes/morning"),
		bt.TextContains(row+" .state", "in the exercise"),
		chromedp.WaitVisible(row+` td.current`),
		chromedp.WaitVisible(row+` input[data-select]`),
		chromedp.WaitVisible(row+` button[data-act="reset"]`),
		chromedp.WaitVisible(row+` button[data-act="extend"]`),
		chromedp.WaitVisible(row+` button[data-act="end"]`),
		// The questions End and Close ask are answered yes, and kept.
		chromedp.Evaluate[chromedp.Void](`window.confirm = (q) => { (window.asked ||= []).push(q); return true; }`),
		sh.Take("board"))

	step(ada, "Reset puts Grace's exercise back before its fault", 3*time.Minute,
		pressed(`board-note`, row+` button[data-act="reset"]`),
		bt.TextContains(`#board-note`, "Done."),
		bt.TextContains(row+" .state", "ready"))
	if st := status(); st.State != session.Ready || st.Attempt != nil {
		t.Errorf("after Reset: got %s with attempt %+v, want ready with none", st.State, st.Attempt)
	}
	step(grace, "Grace's page shows the exercise ready to break again", time.Minute,
		bt.TextContains(`#ex-state`, "ready"),
		chromedp.WaitVisible(`#break:not([disabled])`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#clock').textContent === ''`))

	step(ada, "Extend adds the toolbar's minutes to Grace's time", time.Minute,
		chromedp.SetValue(`#extend-minutes`, "5"),
		pressed(`board-note`, row+` button[data-act="extend"]`),
		bt.TextContains(`#board-note`, "Done."))
	if got := status().Extended.Duration(); got != 5*time.Minute {
		t.Errorf("after Extend: got %s extended, want 5m", got)
	}

	step(ada, "Extend the selected, with nobody ticked, says to tick first", 30*time.Second,
		pressed(`board-note`, `#extend-selected`),
		bt.TextContains(`#board-note`, "Tick the learners to extend first."))
	step(ada, "Extend the selected extends the ticked learner", time.Minute,
		clicked(row+` input[data-select]`),
		chromedp.Poll[chromedp.Void](`document.querySelector('`+row+` input[data-select]').checked`),
		chromedp.SetValue(`#extend-minutes`, "7"),
		pressed(`board-note`, `#extend-selected`),
		bt.TextContains(`#board-note`, "1 sessions extended."),
		// Done, the selection is cleared.
		chromedp.Poll[chromedp.Void](`document.querySelector('`+row+` input[data-select]')?.checked === false`),
		sh.Take("extended"))
	if got := status().Extended.Duration(); got != 12*time.Minute {
		t.Errorf("after Extend the selected: got %s extended, want 12m (5m, then 7m)", got)
	}

	step(ada, "End stops Grace's session, and her row is no longer live", 2*time.Minute,
		pressed(`board-note`, row+` button[data-act="end"]`),
		bt.TextContains(`#board-note`, "Done."),
		bt.TextContains(row+" .state", "stopped"),
		chromedp.WaitNotPresent(row+` input[data-select]`),
		chromedp.WaitNotPresent(row+` button[data-act]`),
		sh.Take("ended"))
	if st := status(); st.State != session.Expired || st.Ended != app.EndedByInstructor {
		t.Errorf("after End: got %s, ended %q; want expired, %q", st.State, st.Ended, app.EndedByInstructor)
	}
	step(grace, "Grace's page says the instructor ended it", time.Minute,
		bt.TextContains(`#action-note`, app.EndedByInstructor),
		chromedp.WaitVisible(`#start:not([disabled])`))

	exported := exportPressed(t, ada, sh)
	if !strings.Contains(exported, "Grace") {
		t.Errorf("the exported CSV has no row of Grace's:\n%s", exported)
	}

	step(ada, "Close closes the class", 30*time.Second,
		chromedp.Click(`#close-class`),
		bt.TextContains(`#class-state`, "closed"),
		chromedp.WaitVisible(`#close-class[disabled]`),
		sh.Take("closed"))
	if c, err := s.app.Class(ctx, class.Actor{Name: "ada"}, "morning"); err != nil || !c.Closed {
		t.Errorf("after Close: got %+v, %v; want the class closed", c, err)
	}
	// A closed class signs its learners out (class.ErrSignedOut): Grace's
	// start is refused, and her session is no longer hers to read.
	step(grace, "Grace cannot start again in the closed class", time.Minute,
		chromedp.Click(`#start`),
		chromedp.WaitVisible(`#start-error`),
		bt.TextContains(`#start-error-text`, "sign in first"))
	if got := fetched[int](t, grace, fmt.Sprintf(`fetch(%q).then((r) => r.status)`, "/api/sessions/"+gid)); got != 401 {
		t.Errorf("Grace reads her session after the class closed: got %d, want 401", got)
	}

	asked := eval[[]string](t, ada, `window.asked`)
	if len(asked) != 2 || !strings.Contains(asked[0], "End this learner's session?") || !strings.Contains(asked[1], "Close the class?") {
		t.Errorf("the board asked %q, want End's question, then Close's", asked)
	}
	if e := errs.List(); len(e) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(e, "\n"))
	}
}

// graceSession returns the id of Grace's latest session in the class.
func graceSession(t *testing.T, s *site) string {
	t.Helper()
	b, err := s.app.Board(context.Background(), class.Actor{Name: "ada"}, "morning", "en")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range b.Rows {
		if r.Name == "Grace" && r.Session != "" {
			return r.Session
		}
	}
	t.Fatalf("Grace has no session on the board: %+v", b.Rows)
	return ""
}

// pressed empties the note with id note, then clicks sel (see clicked):
// the note the press leaves is then its own, not an earlier one's.
func pressed(note, sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById(%q).textContent = ''`, note))(ctx, tg); err != nil {
			return err
		}
		_, err := clicked(sel)(ctx, tg)
		return err
	})
}

// clicked clicks sel. The board draws its rows anew on every event of the
// class, so the node found may be gone before the mouse reaches it; the
// click is tried again on the new one.
func clicked(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for {
			_, err := chromedp.Steps(chromedp.WaitVisible(sel), chromedp.Click(sel))(ctx, tg)
			if err == nil || ctx.Err() != nil || !gone(err) {
				return err
			}
		}
	})
}

// gone says whether err is Chromium's answer about a node no longer in
// the page.
func gone(err error) bool {
	m := strings.ToLower(err.Error())
	return strings.Contains(m, "node") || strings.Contains(m, "box model")
}

// exportPressed presses the board's Export in ada's tab, which downloads
// the class's CSV into a directory of the test's, and returns the CSV.
func exportPressed(t *testing.T, ada context.Context, sh *bt.Shots) string {
	t.Helper()
	dir := t.TempDir()
	sh.Step(t, ada, 30*time.Second, "Export downloads the class's results", front(),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
				Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir})
			return err
		}),
		chromedp.Click(`#export`),
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			for {
				if _, err := os.Stat(filepath.Join(dir, "morning.csv")); err == nil {
					return nil
				} else if !errors.Is(err, os.ErrNotExist) {
					return err
				}
				select {
				case <-ctx.Done():
					return fmt.Errorf("no morning.csv downloaded: %w", ctx.Err())
				case <-time.After(100 * time.Millisecond):
				}
			}
		}))
	b, err := os.ReadFile(filepath.Join(dir, "morning.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := csv.NewReader(strings.NewReader(string(b))).ReadAll(); err != nil {
		t.Errorf("the exported CSV: %v\n%s", err, b)
	}
	return string(b)
}
