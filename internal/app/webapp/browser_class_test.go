package webapp

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	bt "oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/internal/class"
)

// TestBrowserRunsAClass is a class from the instructor's side and two
// learners', in headless Chromium against the real thing (the server as
// `oplab serve` composes it, embedded clusters, the operator): the
// instructor creates the class with the dashboard's form (a bad field is
// refused and kept, an edit made stale by `oplab class edit` says so);
// two learners join with its code in browsers of their own; one starts
// the failover lab, breaks it and repairs it while the instructor's grid
// follows without a reload; the replay of that session, scrubbed back to
// before the fault; the CSV export; and the other learner cannot reach
// the first one's session.
func TestBrowserRunsAClass(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	if _, err := s.app.AddInstructor(ctx, "ada", "ada-password", false); err != nil {
		t.Fatal(err)
	}
	var errs bt.Errors
	ada := bt.New(t, errs.Listen)
	sh := bt.NewShots(t, "class")
	// Each browser's tab is brought to the front before it acts, as the
	// person at it would look at it: a background tab draws nothing.
	step := func(who context.Context, name string, limit time.Duration, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sh.Step(t, who, limit, name, append([]chromedp.Action[chromedp.Void]{front()}, actions...)...)
	}

	step(ada, "the instructor signs in", 30*time.Second,
		chromedp.Navigate(s.url+"/instructor/login"),
		chromedp.SendKeys(`#name`, "ada"),
		chromedp.SendKeys(`#password`, "ada-password"),
		bt.Loads(chromedp.Submit(`#login-form`)),
		chromedp.WaitVisible(`#new-class-form`),
		sh.Take("no-classes"))
	step(ada, "a bad time limit is refused, the input kept", 30*time.Second,
		chromedp.SendKeys(`#new-name`, "morning"),
		chromedp.Click(`#new-class-form li[data-lab="failover"] input`),
		chromedp.SendKeys(`#new-capacity`, "5"),
		chromedp.SendKeys(`#new-timelimit`, "90"),
		chromedp.Click(`#new-class-form button[type="submit"]`),
		chromedp.WaitVisible(`#new-class-form .form-error`),
		bt.TextContains(`#new-class-form .form-error`, `time limit "90"`),
		sh.Take("refused"))
	if got := eval[string](t, ada, `document.querySelector('#new-name').value + ' ' + document.querySelector('#new-capacity').value`); got != "morning 5" {
		t.Errorf("the form after the refusal: got %q, want the input kept (morning 5)", got)
	}
	step(ada, "the class is created", 30*time.Second,
		chromedp.SetValue(`#new-timelimit`, "90m"),
		navigates(chromedp.Click(`#new-class-form button[type="submit"]`)),
		chromedp.WaitVisible(`#classes tr[data-class="morning"].saved`),
		bt.TextContains(`#saved-note`, "Join code"),
		sh.Take("created"))
	c, err := s.app.Class(ctx, class.LocalAdmin(), "morning")
	if err != nil {
		t.Fatal(err)
	}
	if c.Owner != "ada" || c.Capacity != 5 || c.TimeLimit.Duration() != 90*time.Minute || strings.Join(c.Labs, ",") != "failover" {
		t.Errorf("the class created by the form: got %+v, want ada's, capacity 5, 90m, labs failover", c)
	}
	code := eval[string](t, ada, `document.querySelector('#classes tr[data-class="morning"] .code').textContent`)
	if code != c.JoinCode {
		t.Errorf("join code shown: got %q, want %q", code, c.JoinCode)
	}

	// Someone changes the class from the terminal while the edit form is
	// open: the form's save is refused rather than undo that change.
	step(ada, "open the edit form", 30*time.Second,
		chromedp.Click(`#classes tr[data-class="morning"] a.edit-link`),
		chromedp.WaitVisible(`#edit-morning form`))
	six := 6
	if _, err := s.app.EditClass(ctx, class.LocalAdmin(), "morning", class.Changes{Capacity: &six}); err != nil {
		t.Fatal(err)
	}
	step(ada, "a stale edit says the class changed meanwhile", 30*time.Second,
		chromedp.SetValue(`#edit-morning-capacity`, "10"),
		chromedp.Click(`#edit-morning button[type="submit"]`),
		chromedp.WaitVisible(`#edit-morning .form-error button.reload`),
		bt.TextContains(`#edit-morning .form-error`, "changed meanwhile"),
		sh.Take("stale"))
	step(ada, "reload, then the edit is saved", 30*time.Second,
		navigates(chromedp.Click(`#edit-morning .form-error button.reload`)),
		chromedp.WaitVisible(`#classes tr[data-class="morning"]`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#edit-morning-capacity')?.value === '6'`),
		chromedp.Click(`#classes tr[data-class="morning"] a.edit-link`),
		chromedp.SetValue(`#edit-morning-capacity`, "10"),
		navigates(chromedp.Click(`#edit-morning button[type="submit"]`)),
		chromedp.WaitVisible(`#classes tr[data-class="morning"].saved`),
		bt.TextContains(`#classes tr[data-class="morning"]`, "0 / 10"))

	grace, linus := join(t, bt.New(t, errs.Listen), s, sh, code, "Grace"), join(t, bt.New(t, errs.Listen), s, sh, code, "Linus")
	step(ada, "the board lists both learners", 30*time.Second,
		chromedp.Navigate(s.url+"/instructor/classes/morning"),
		chromedp.WaitVisible(`#grid-body tr:nth-child(2)`),
		bt.TextContains(`#grid-body`, "Grace"),
		bt.TextContains(`#grid-body`, "Linus"),
		chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`),
		sh.Take("board"))

	step(grace, "Grace starts the failover lab", 3*time.Minute,
		chromedp.Navigate(s.url+"/labs/failover"),
		chromedp.WaitVisible(`#start:not([disabled])`),
		chromedp.Click(`#start`),
		chromedp.WaitVisible(`#exercise-panel`))
	id := activeSessionOf(t, s, "Grace")
	step(ada, "the board shows her in the exercise", time.Minute,
		bt.TextContains(fmt.Sprintf(`#grid-body tr[data-session=%q] .state`, id), "ready"),
		sh.Take("board-ready"))
	step(grace, "Grace breaks it", time.Minute,
		chromedp.WaitVisible(`#break:not([disabled])`),
		chromedp.Click(`#break`),
		bt.TextContains("#clock", "Fault live for"))
	row := fmt.Sprintf(`#grid-body tr[data-session=%q]`, id)
	step(ada, "the board shows the fault live", time.Minute,
		bt.TextContains(row+" .state", "in the exercise"),
		bt.TextContains(row+" .exercise", "delete-primary"),
		chromedp.WaitVisible(row+" td.current .fault"),
		sh.Take("board-fault"))
	step(grace, "Grace's check passes", 2*time.Minute,
		checkUntilPassed())
	step(ada, "the board shows it passed, without a reload", time.Minute,
		bt.TextContains(row+" td.passed-count", "1"),
		chromedp.WaitVisible(row+" td.ok .score"),
		chromedp.WaitVisible(row+" td.ok .ttr"),
		chromedp.Poll[chromedp.Void](`window.notReloaded === true`),
		sh.Take("board-passed"))
	score := eval[string](t, ada, `document.querySelector('`+row+` td.ok .score').textContent`)

	replay(t, ada, s, sh, id)
	exportChecked(t, ada, score)

	// Linus is signed in as a learner of the same class: Grace's session
	// is not his, whatever route he tries.
	for _, path := range []string{"/api/sessions/" + id, "/api/sessions/" + id + "/timeline", "/api/sessions/" + id + "/debrief",
		"/api/sessions/" + id + "/streams/log", "/api/classes/morning/board", "/api/classes/morning/sessions/" + id + "/debrief"} {
		got := fetched[int](t, linus, fmt.Sprintf(`fetch(%q).then((r) => r.status)`, path))
		if got != 403 && got != 404 {
			t.Errorf("Linus fetches %s: got %d, want 403 or 404", path, got)
		}
	}
	if e := errs.List(); len(e) > 0 {
		t.Errorf("the pages logged errors:\n%s", strings.Join(e, "\n"))
	}
}

// fetched evaluates js, a promise, in the tab and returns what it
// resolves to.
func fetched[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// navigates runs act, which makes the page load another (a form whose
// script moves on, a reload), and returns once the new page has loaded:
// the old page is marked first, and asking the tab while it navigates
// is an error to wait out, not a failure.
func navigates(act chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.oplabOldPage = true`), act); err != nil {
			return err
		}
		for {
			if ok, err := chromedp.Evaluate[bool](`window.oplabOldPage !== true && document.readyState === 'complete'`)(ctx, t); err == nil && ok {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
}

// front brings the tab to the front.
func front() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.BringToFront, cdp.Empty{})
		return err
	})
}

// join joins the class with code under name in ctx, a browser of the
// learner's own (its own profile and cookies).
func join(t *testing.T, ctx context.Context, s *site, sh *bt.Shots, code, name string) context.Context {
	t.Helper()
	sh.Step(t, ctx, 30*time.Second, name+" joins", front(), chromedp.Navigate(s.url+"/join"),
		chromedp.SendKeys(`#code`, code),
		chromedp.SendKeys(`#name`, name),
		chromedp.Submit(`#join-form`),
		chromedp.WaitVisible(`#rejoin-code`),
		bt.TextContains(`#joined-name`, name),
		sh.Take("joined-"+strings.ToLower(name)))
	return ctx
}

// activeSessionOf returns the active session of the class member called
// name.
func activeSessionOf(t *testing.T, s *site, name string) string {
	t.Helper()
	ms, err := s.app.Members(context.Background(), class.LocalAdmin(), "morning")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Name == name {
			list, err := s.app.SessionList(context.Background(), m.Learner)
			if err != nil {
				t.Fatal(err)
			}
			for _, ss := range list {
				if ss.State.Active() {
					return ss.ID
				}
			}
		}
	}
	t.Fatalf("%s has no active session", name)
	return ""
}

// replay opens the instructor's view of session id: the replay ends with
// every check passing; scrubbed back to just before the fault, no check
// had run and fewer operator log lines had been written.
func replay(t *testing.T, ada context.Context, s *site, sh *bt.Shots, id string) {
	t.Helper()
	sh.Step(t, ada, time.Minute, "the replay of Grace's session", front(), chromedp.Navigate(s.url+"/instructor/classes/morning/sessions/"+id),
		chromedp.WaitVisible(`#scrubber:not([disabled])`),
		chromedp.WaitVisible(`#debrief-events li.past[data-kind="recovered"]`),
		chromedp.ScrollIntoView(`#debrief`),
		sh.Take("replay-end"))
	checks := eval[[]string](t, ada, `[...document.querySelectorAll('#debrief-checks li')].map((li) => li.className)`)
	if len(checks) == 0 || strings.Count(strings.Join(checks, " "), "pass") != len(checks) {
		t.Errorf("checks at the end: got %q, want every one passing", checks)
	}
	logEnd := eval[int](t, ada, `Number(document.querySelector('#debrief-log-count').dataset.count)`)
	if logEnd == 0 {
		t.Error("the replay shows no operator log line at the end")
	}
	sh.Step(t, ada, 30*time.Second, "scrub back to just before the fault", chromedp.Evaluate[chromedp.Void](`(() => {
			const s = document.querySelector('#scrubber');
			const chaos = document.querySelector('#debrief-events li[data-kind="chaos"]');
			s.value = String(Number(chaos.dataset.at) - Number(document.querySelector('#debrief').dataset.start) - 1000);
			s.dispatchEvent(new Event('input', { bubbles: true }));
		})()`),
		chromedp.ScrollIntoView(`#debrief-at`),
		sh.Take("replay-before-fault"))
	past := eval[[]string](t, ada, `[...document.querySelectorAll('#debrief-events li.past')].map((li) => li.dataset.kind)`)
	for _, k := range past {
		if k == "chaos" || k == "check" || k == "recovered" {
			t.Errorf("events before the fault: got %q, want no chaos, check or recovery", past)
			break
		}
	}
	if got := eval[string](t, ada, `document.querySelector('#debrief-checks li').className`); got != "none" {
		t.Errorf("checks before the fault: got %q, want none yet", got)
	}
	if n := eval[int](t, ada, `Number(document.querySelector('#debrief-log-count').dataset.count)`); n >= logEnd {
		t.Errorf("log lines before the fault: got %d, want fewer than the %d at the end", n, logEnd)
	}
}

// exportChecked fetches the class's CSV export in the instructor's page
// and checks it: a row per learner and exercise of the failover lab;
// Grace's first exercise passed with score, T0, T1 and the time to
// recovery; Linus's rows empty.
func exportChecked(t *testing.T, ada context.Context, score string) {
	t.Helper()
	text := fetched[string](t, ada, `fetch('/api/classes/morning/export.csv').then((r) => r.text())`)
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("export: %v\n%s", err, text)
	}
	if got, want := strings.Join(recs[0], ","), strings.Join(class.Header, ","); got != want {
		t.Errorf("export header: got %s, want %s", got, want)
	}
	rows := map[string][]string{}
	for _, r := range recs[1:] {
		rows[r[1]+"/"+r[3]] = r
	}
	if len(recs) != 5 || len(rows) != 4 {
		t.Fatalf("export: got %d rows, want 4 (2 learners × 2 exercises):\n%s", len(recs)-1, text)
	}
	g := rows["Grace/delete-primary"]
	if g == nil {
		t.Fatalf("export: no row for Grace's delete-primary:\n%s", text)
	}
	if got := g[4] + "/" + g[5]; got != score || g[4] != g[5] {
		t.Errorf("Grace's score: got %s, want %s as the board showed, all passing", got, score)
	}
	t0, err0 := time.Parse(time.RFC3339, g[6])
	t1, err1 := time.Parse(time.RFC3339, g[7])
	if err0 != nil || err1 != nil || !t1.After(t0) {
		t.Errorf("Grace's T0, T1: got %q, %q; want two times, T1 after T0", g[6], g[7])
	}
	var ttr float64
	if _, err := fmt.Sscanf(g[8], "%g", &ttr); err != nil || ttr <= 0 || math.Abs(ttr-t1.Sub(t0).Seconds()) > 0.01 {
		t.Errorf("Grace's time to recovery: got %q, want T1 − T0 (%v)", g[8], t1.Sub(t0))
	}
	for _, ex := range []string{"delete-primary", rowExercise(rows, "Linus", "delete-primary")} {
		l := rows["Linus/"+ex]
		if l == nil || strings.Join(l[4:9], "") != "" || l[9] != "0" {
			t.Errorf("Linus's %s: got %q, want no score, times or recovery, no hints", ex, l)
		}
	}
}

// rowExercise returns the exercise of learner's other row than not.
func rowExercise(rows map[string][]string, learner, not string) string {
	for k, r := range rows {
		if strings.HasPrefix(k, learner+"/") && r[3] != not {
			return r[3]
		}
	}
	return ""
}
