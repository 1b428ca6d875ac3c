package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/web"
)

// browser starts a headless Chromium (see browsertest.New).
func browser(t testing.TB, listen func(ev any)) context.Context { return browsertest.New(t, listen) }

// shots writes numbered screenshots of a test's steps.
type shots struct{ *browsertest.Shots }

func newShots(t testing.TB, name string) *shots { return &shots{browsertest.NewShots(t, name)} }

func (s *shots) take(name string) chromedp.Action[chromedp.Void] { return s.Take(name) }

// step runs actions and fails the test with the step's name.
func (s *shots) step(t *testing.T, ctx context.Context, name string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	s.Step(t, ctx, 30*time.Second, name, actions...)
}

func textContains(sel, want string) chromedp.Action[chromedp.Void] {
	return browsertest.TextContains(sel, want)
}

// TestBrowserPlaysTheLab drives the whole page in Chromium over the
// scripted application: every control, panel and stream of the page, in
// the browser's own JavaScript engine, under the page's CSP.
func TestBrowserPlaysTheLab(t *testing.T) {
	app := newFakeApp()
	lab := newScriptedLearning(app.learning, newFakeStreams())
	lab.failStarts = 1
	lab.sessions = map[string]*SessionRef{"bob-1": {ID: "bob-1", Learner: "bob", Lab: "failover", State: "ready"}}
	cfg := app.config(Config{Console: fakeConsole{}, Streams: lab.streams, Web: web.FS})
	cfg.Learning = lab
	ts, s := serveFake(t, cfg)

	var pageErrs browsertest.Errors
	ctx := browser(t, pageErrs.Listen)
	sh := newShots(t, "browser")

	sh.step(t, ctx, "sign in and see the catalogue",
		chromedp.Navigate(s.SignInURL(ts.URL)),
		chromedp.WaitVisible(`#labs li[data-lab="failover"]`),
		textContains("#labs", "Failover: lose the primary"),
		sh.take("catalogue"))
	sh.step(t, ctx, "open the lab and start it",
		chromedp.Click(`a[href="/labs/failover"]`),
		chromedp.WaitVisible(`#start:not([disabled])`),
		chromedp.Click(`#start`),
		chromedp.WaitVisible(`#start-error`),
		textContains("#start-error", "install the operator: timed out"),
		textContains("#steps li.failed", "helm install: timed out"),
		sh.take("start-failed"),
		chromedp.Click(`#retry`),
		chromedp.WaitVisible(`#steps li.done`),
		sh.take("provisioning"),
		chromedp.WaitVisible(`#exercise-panel`),
		chromedp.WaitVisible(`#steps li.done:nth-child(4)`, chromedp.AtLeast(0)),
	)
	sh.step(t, ctx, "reconcile lines arrive",
		textContains("#log", "reconcile: 3/3 replicas ready"),
		textContains("#ex-pos", "Exercise 1 of 1"),
		sh.take("ready"))
	// A status the page asked for before the break, answered after it,
	// is older than the break's own answer and must not be drawn over it.
	held := &heldStatus{asked: make(chan struct{}), release: make(chan struct{})}
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(held.release) }) }
	// A step that fails must not leave the read held: the server's Close
	// would wait for it.
	t.Cleanup(release)
	sh.step(t, ctx, "break it",
		chromedp.WaitVisible(`#lab[data-live="true"] #break:not([disabled])`),
		chromedp.Func(func(context.Context, *chromedp.Target) error {
			lab.mu.Lock()
			lab.heldStatus = held
			lab.mu.Unlock()
			s.events.publish("local", Update{Session: "alice-2", Kind: "state", Message: "ready"})
			select {
			case <-held.asked:
				return nil
			case <-time.After(10 * time.Second):
				return errors.New("the page did not ask for its status after a state update")
			}
		}),
		chromedp.Click(`#break`),
		textContains("#steady", "exactlyOnePrimary"),
		textContains("#clock", "Fault live for"),
		chromedp.Func(func(context.Context, *chromedp.Target) error {
			release()
			time.Sleep(time.Second) // the stale answer arrives and is handled
			return nil
		}),
		// Read once, not polled: the page's next refresh would put right
		// what a stale answer drew.
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			clock, err := chromedp.Evaluate[string](`document.querySelector('#clock').textContent`)(ctx, tg)
			if err != nil {
				return err
			}
			if !strings.Contains(clock, "Fault live for") {
				return fmt.Errorf("after a status asked for before the break was answered, the clock reads %q", clock)
			}
			return nil
		}),
		chromedp.WaitVisible(`#log li.trouble`),
		chromedp.WaitVisible(`#log li.after-t0`),
		sh.take("broken"))
	sh.step(t, ctx, "the cluster view shows the new primary",
		chromedp.Click(`#tab-cluster`),
		textContains(".current-primary", "prod-db-1"),
		textContains(`tr[data-pod="prod-db-1"] .role`, "primary"),
		textContains(`tr[data-service="prod-db-rw"] .addresses`, "prod-db-1"),
		textContains(`#cluster .pods-more`, "and 600 more"),
		textContains(`tr[data-service="prod-db-ro"] .addresses`, "and 5 more"),
		sh.take("cluster"))
	sh.step(t, ctx, "run a command in the console",
		chromedp.Click(`#tab-console`),
		chromedp.SendKeys(`#console-in`, "kubectl get pods -L databases.example.com/role"+kb.Enter),
		textContains("#console-out", `ran "kubectl get pods -L databases.example.com/role" in alice-2`),
		chromedp.SendKeys(`#console-in`, "kubectl get pos"+"\t"),
		chromedp.Poll[chromedp.Void](`document.querySelector('#console-in').value === 'kubectl get postgresclusters '`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#console-in').value = ''`),
		chromedp.SendKeys(`#console-in`, "kubectl get po"+"\t"),
		chromedp.WaitVisible(`#console-completions li`),
		textContains("#console-completions", "podtemplates"),
		chromedp.SendKeys(`#console-in`, "d\t"),
		chromedp.Poll[chromedp.Void](`document.querySelector('#console-in').value === 'kubectl get pod'`),
		chromedp.SendKeys(`#console-in`, "s\t"),
		chromedp.Poll[chromedp.Void](`document.querySelector('#console-in').value === 'kubectl get pods '`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#console-in').value = ''`),
		chromedp.SendKeys(`#console-in`, kb.ArrowUp),
		chromedp.Poll[chromedp.Void](`document.querySelector('#console-in').value === 'kubectl get pods -L databases.example.com/role'`),
		sh.take("console"))
	sh.step(t, ctx, "a lesson's run button fills the console",
		chromedp.Click(`#tab-log`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('button.console-run').click()`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#console-in').value.startsWith('kubectl') && !document.querySelector('#panel-console').hidden`))
	sh.step(t, ctx, "edit an object from the cluster view",
		chromedp.Click(`#tab-cluster`),
		chromedp.Click(`button.edit[data-name="prod-db"]`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#editor').value.includes('kubectl get postgrescluster prod-db -o yaml')`),
		chromedp.Click(`#editor-dryrun`),
		textContains("#editor-out", "--dry-run=server"),
		sh.take("editor"))
	sh.step(t, ctx, "hint",
		chromedp.Click(`#hint`),
		textContains("#hints", "Look at the events of prod-db."),
		textContains("#hints", "Unlocked: a FailingOver event was recorded (primary prod-db-0 is missing: electing prod-db-1)"),
		textContains("#hints", "Next hint in 40s, or sooner when a FailoverComplete event or a log line matching /(?i)promot/ is seen."))
	sh.step(t, ctx, "check passes with a time to recovery",
		chromedp.Click(`#check`),
		textContains("#results", "primaryChanged"),
		textContains("#clock", "Recovered in 1.7s"),
		chromedp.WaitVisible(`#quiz-panel`),
		sh.take("checked"))
	sh.step(t, ctx, "an unanswered quiz is not sent",
		chromedp.WaitVisible(`#quiz-form input[value="a"]`),
		textContains("#quiz-form .standing", "Your first submission is your grade."),
		chromedp.Click(`#quiz-form button[type="submit"]`),
		textContains("#quiz-form .score", "Answer every question before you submit."))
	if calls := lab.calls(); strings.Contains(strings.Join(calls, "\n"), "answer alice-2") {
		t.Errorf("an unanswered quiz was sent: got calls %q", calls)
	}
	sh.step(t, ctx, "answer the quiz",
		chromedp.Click(`#quiz-form input[value="a"]`),
		chromedp.Click(`#quiz-form button[type="submit"]`),
		textContains("#quiz-form .score", "1 of 1 correct"),
		textContains("#quiz-form .verdict", "Correct. The operator elects the most advanced replica."),
		textContains("#quiz-form .standing", "Your grade is final."),
		chromedp.WaitVisible(`#quiz-form button[type="submit"][disabled]`),
		sh.take("quiz"))
	if calls := lab.calls(); !strings.Contains(strings.Join(calls, "\n"), "answer alice-2 map[q1:[a]]") {
		t.Errorf("quiz answers sent: got calls %q, want q1=a", calls)
	}
	sh.step(t, ctx, "switch to Korean", chromedp.Click(`form.lang button`))
	sh.step(t, ctx, "the page in Korean, the choice remembered",
		chromedp.WaitVisible(`html[lang="ko"] #start:not([disabled])`),
		textContains("#start-panel", "실습 시작"),
		textContains(".lesson summary", "강의"),
		sh.take("korean"),
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(`html[lang="ko"] #labs`),
		textContains("#labs", "페일오버"))
	if errs := pageErrs.List(); len(errs) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(errs, "\n"))
	}
}
