package webapp

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"oplab.dev/oplab/internal/app"
	bt "oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/internal/session"
)

// TestBrowserRunsTheFailoverLab is the learner's whole failover lab in
// headless Chromium against the real thing: the lab server as `oplab
// serve` composes it, a real embedded cluster, the operator, the course.
// From the catalogue: start (the provisioning steps as they happen),
// reconcile lines arrive, break it, the cluster view shows the new
// primary, a kubectl command in the console, Check passes with a time to
// recovery that the server watched; the second exercise is checked from
// the terminal (`oplab lab check`) and the page follows; the quiz,
// answered from what the cluster view showed; the summary. A screenshot
// of each step is written to the directory the log names, and the lab
// page mid-failover to lab.png beside it, which `make screenshots` copies
// to docs/images/lab.png for the README.
func TestBrowserRunsTheFailoverLab(t *testing.T) {
	s := newSite(t)
	var errs bt.Errors
	ctx := bt.New(t, errs.Listen)
	sh := bt.NewShots(t, "failover-lab")
	step := func(name string, limit time.Duration, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sh.Step(t, ctx, limit, name, actions...)
	}

	step("sign in and see the catalogue", 30*time.Second,
		chromedp.Navigate(s.signIn()),
		chromedp.WaitVisible(`#labs li[data-lab="failover"]`),
		sh.Take("catalogue"))
	step("start the lab and see its steps", 3*time.Minute,
		chromedp.Click(`a[href="/labs/failover"]`),
		chromedp.WaitVisible(`#start:not([disabled])`),
		chromedp.Click(`#start`),
		chromedp.WaitVisible(`#steps li`),
		sh.Take("provisioning"),
		chromedp.WaitVisible(`#exercise-panel`),
		sh.Take("ready"))
	steps := eval[[]string](t, ctx, `[...document.querySelectorAll('#steps li')].map((li) => li.className + ' ' + li.textContent)`)
	if len(steps) < 3 {
		t.Errorf("the start showed %d steps, want the cluster, the operator and the setup at least: %q", len(steps), steps)
	}
	for _, st := range steps {
		if !strings.HasPrefix(st, "done ") {
			t.Errorf("start step %q: want done, with its elapsed time", st)
		}
	}
	id := activeSession(t, s)

	step("reconcile lines arrive", time.Minute,
		chromedp.WaitVisible(`#log li .object`),
		sh.Take("log"))
	before := eval[string](t, ctx, `document.querySelector('#cluster .current-primary')?.textContent ?? ''`)
	step("break it", time.Minute,
		chromedp.WaitVisible(`#break:not([disabled])`),
		chromedp.Click(`#break`),
		chromedp.WaitVisible(`#steady`),
		bt.TextContains("#clock", "Fault live for"),
		chromedp.WaitVisible(`#log li.after-t0`),
		sh.Take("broken"))
	step("the cluster view shows the new primary", 2*time.Minute,
		chromedp.Click(`#tab-cluster`),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => {
			const p = document.querySelector('#cluster .current-primary')?.textContent ?? '';
			return /^prod-db-\d+$/.test(p) && p !== %q &&
				document.querySelector('tr[data-pod="' + p + '"] .role')?.textContent === 'primary' &&
				(document.querySelector('tr[data-service="prod-db-rw"] .addresses')?.textContent ?? '') === p;
		})()`, before), chromedp.WithPollingInterval(100*time.Millisecond)),
		sh.Take("cluster"),
		// The README's picture of the lab page (make screenshots).
		sh.Keep("lab"))
	primary := eval[string](t, ctx, `document.querySelector('#cluster .current-primary').textContent`)
	step("a hint, with what unlocked it", time.Minute,
		chromedp.Click(`#hint`),
		bt.TextContains("#hints", "Unlocked: a FailingOver event was recorded"),
		bt.TextContains("#hints", "Next hint in"),
		sh.Take("hint"))
	step("run kubectl in the console", time.Minute,
		chromedp.Click(`#tab-console`),
		chromedp.SendKeys(`#console-in`, "kubectl get pods -L databases.example.com/role"+kb.Enter),
		chromedp.WaitVisible(`#console-in:not([disabled])`),
		bt.TextContains("#console-out", "ROLE"),
		bt.TextContains("#console-out", primary),
		sh.Take("console"))
	out := eval[string](t, ctx, `document.querySelector('#console-out').textContent`)
	if !regexp.MustCompile(primary + `\s.*primary`).MatchString(out) {
		t.Errorf("console: want %s shown as the primary in\n%s", primary, out)
	}
	step("the YAML editor: a dry run points at the wrong line", time.Minute,
		chromedp.Click(`#tab-cluster`),
		chromedp.Click(`button.edit[data-kind="postgrescluster"][data-name="prod-db"]`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#editor').value.includes('kind: PostgresCluster')`),
		chromedp.Evaluate[chromedp.Void](`(() => {
			const e = document.querySelector('#editor');
			e.value = e.value.replace(/^(\s+)replicas: 3$/m, '$1replicas: three');
			e.dispatchEvent(new Event('input'));
		})()`),
		chromedp.Click(`#editor-dryrun`),
		chromedp.WaitVisible(`#editor-out.error`),
		chromedp.WaitVisible(`#editor-lines span.bad`),
		sh.Take("editor"))
	if got, want := eval[string](t, ctx, `document.querySelector('#editor-lines span.bad').textContent.trim()`),
		eval[string](t, ctx, `String(document.querySelector('#editor').value.split('\n').findIndex((l) => l.includes('replicas: three')) + 1)`); got != want || want == "0" {
		t.Errorf("editor: the line marked is %s, want %s (replicas)", got, want)
	}
	step("the YAML editor: a good manifest passes the dry run", time.Minute,
		chromedp.Evaluate[chromedp.Void](`(() => {
			const e = document.querySelector('#editor');
			e.value = e.value.replace('replicas: three', 'replicas: 3');
			e.dispatchEvent(new Event('input'));
		})()`),
		chromedp.Click(`#editor-dryrun`),
		chromedp.WaitVisible(`#editor-out.ok`),
		bt.TextContains("#editor-out", "(server dry run)"))
	// The learner looks around before pressing Check: the time to
	// recovery is when the cluster recovered, which the server watched.
	time.Sleep(2 * time.Second)
	step("check passes with a time to recovery", 2*time.Minute,
		checkUntilPassed(),
		sh.Take("checked"))
	rec := recovered(t, s, id, "delete-primary")
	if !hasConsoleEvent(t, s, id, "kubectl get pods -L databases.example.com/role") {
		t.Error("the console command is not on the session's timeline")
	}
	if rec.T1Source != session.T1Watched {
		t.Errorf("time to recovery found by %q, want %q (the server watches the goals)", rec.T1Source, session.T1Watched)
	}
	if shown := eval[string](t, ctx, `document.querySelector('#clock').textContent`); !strings.Contains(shown, "Recovered in") {
		t.Errorf("clock: got %q, want the time to recovery", shown)
	}

	step("on to the second exercise and break it", time.Minute,
		chromedp.WaitVisible(`#next:not([hidden])`),
		chromedp.Click(`#next`),
		bt.TextContains("#ex-pos", "2 of 2"),
		chromedp.WaitVisible(`#break:not([disabled])`),
		chromedp.Click(`#break`),
		bt.TextContains("#clock", "Fault live for"),
		sh.Take("second-broken"))
	// The terminal acts on the same session: the page follows, no reload.
	checkFromTerminal(t, s)
	step("the page shows the terminal's check and the quiz", time.Minute,
		chromedp.WaitVisible(`#quiz-panel`),
		chromedp.WaitVisible(`#quiz-form fieldset`),
		sh.Take("quiz"))

	primary = eval[string](t, ctx, `document.querySelector('#cluster .current-primary').textContent`)
	answerQuiz(t, s, ctx, primary)
	step("the quiz is graded", 30*time.Second,
		chromedp.Click(`#quiz-form button[type="submit"]`),
		chromedp.WaitVisible(`#quiz-form .score`),
		bt.TextContains("#quiz-form .score", "correct"),
		sh.Take("graded"))
	if got := eval[string](t, ctx, `document.querySelector('#quiz-form .score').textContent`); !regexp.MustCompile(`(\d+) of (\d+) correct`).MatchString(got) ||
		regexp.MustCompile(`(\d+) of (\d+)`).FindStringSubmatch(got)[1] != regexp.MustCompile(`(\d+) of (\d+)`).FindStringSubmatch(got)[2] {
		t.Errorf("quiz score: got %q, want every answer correct", got)
	}
	step("the summary, with the session's replay", 30*time.Second,
		chromedp.Click(`#summary-link`),
		chromedp.WaitVisible(`table`),
		bt.TextContains("main", "Delete the primary"),
		chromedp.WaitVisible(`#debrief-events li.past[data-kind="recovered"]`),
		chromedp.WaitVisible(`#debrief-events li.past[data-kind="quiz"]`),
		chromedp.ScrollIntoView(`#debrief`),
		sh.Take("summary"))
	step("the catalogue shows the lab completed", 30*time.Second,
		chromedp.Navigate(s.url+"/"),
		chromedp.WaitVisible(`#labs li[data-lab="failover"]`),
		bt.TextContains(`#labs li[data-lab="failover"]`, "Completed"),
		sh.Take("catalogue-after"))

	// The page's work in /metrics: one start, the check that passed in the
	// page (the second was the terminal's), the console's commands (the
	// learner's, the editor's load and its two dry runs, one refused by
	// the API server).
	if got := s.get(t, "/readyz"); got != "ok" {
		t.Errorf("/readyz: got %q, want ok", got)
	}
	metrics := s.get(t, "/metrics")
	for _, want := range []struct {
		metric string
		min    int
	}{
		{`oplab_provisioning_duration_seconds_count{outcome="ok",provider="embedded"}`, 1},
		{`oplab_check_duration_seconds_count{lab="failover",outcome="ok"}`, 1},
		{`oplab_console_commands_total{outcome="ok"}`, 3},
		{`oplab_console_commands_total{outcome="failed"}`, 1},
		{`oplab_sessions{state="completed"}`, 1},
	} {
		m := regexp.MustCompile(regexp.QuoteMeta(want.metric) + ` (\d+)`).FindStringSubmatch(metrics)
		if m == nil {
			t.Errorf("/metrics: no %s", want.metric)
		} else if n, _ := strconv.Atoi(m[1]); n < want.min {
			t.Errorf("/metrics: %s is %d, want at least %d", want.metric, n, want.min)
		}
	}
	if e := errs.List(); len(e) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(e, "\n"))
	}
}

// eval evaluates a JavaScript expression in the tab.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// checkUntilPassed presses Check until the exercise passes (Next shows),
// as a learner would after fixing (here: waiting for the operator). The
// clock alone does not tell: it shows the recovery the server watched
// before anyone pressed Check.
func checkUntilPassed() chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](`(() => {
		if (!document.querySelector('#next').hidden) return true;
		const b = document.querySelector('#check');
		if (!b.disabled) b.click();
		return false;
	})()`, chromedp.WithPollingInterval(time.Second))
}

// activeSession returns the id of the local learner's active session.
func activeSession(t *testing.T, s *site) string {
	t.Helper()
	list, err := s.app.SessionList(context.Background(), app.LocalLearner)
	if err != nil {
		t.Fatal(err)
	}
	for _, ss := range list {
		if ss.State.Active() {
			return ss.ID
		}
	}
	t.Fatalf("no active session after the start: %+v", list)
	return ""
}

// recovered returns the recovered event of exercise in the session's
// timeline.
func recovered(t *testing.T, s *site, id, exercise string) session.Event {
	t.Helper()
	tl, err := s.app.Timeline(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs := tl.Events
	for _, ev := range evs {
		if ev.Kind == session.KindRecovered && ev.Exercise == exercise {
			return ev
		}
	}
	t.Fatalf("no recovered event of %s in the timeline", exercise)
	return session.Event{}
}

// hasConsoleEvent reports whether the session's timeline has the console
// command line.
func hasConsoleEvent(t *testing.T, s *site, id, line string) bool {
	t.Helper()
	tl, err := s.app.Timeline(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs := tl.Events
	for _, ev := range evs {
		if ev.Kind == session.KindConsole && ev.Console != nil && ev.Console.Line == line && ev.Console.ExitCode == 0 {
			return true
		}
	}
	return false
}

// checkFromTerminal runs `oplab lab check` on the server's data directory
// until it passes, as a learner in a terminal would. It is bin/oplab,
// which make test builds first.
func checkFromTerminal(t *testing.T, s *site) {
	t.Helper()
	oplab := filepath.Join(s.bin, "oplab")
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(time.Second) {
		out, err := exec.Command(oplab, "lab", "check", "--data-dir", s.data, "--bin-dir", s.bin).CombinedOutput()
		if err == nil && strings.Contains(string(out), "Recovered") {
			t.Logf("oplab lab check:\n%s", out)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("oplab lab check did not pass in 90 s: %v\n%s", err, out)
		}
	}
}

// answerQuiz ticks the right answers of the lab's quiz (from the course,
// which the test may read; the page never gets them) and types, for a
// question about the cluster, what the cluster view showed.
func answerQuiz(t *testing.T, s *site, ctx context.Context, primary string) {
	t.Helper()
	q, err := s.app.Quiz("failover")
	if err != nil {
		t.Fatal(err)
	}
	var actions []chromedp.Action[chromedp.Void]
	for _, qq := range q.Questions {
		name := "q-" + qq.ID
		if qq.Type == "cluster" {
			// Both cluster questions of this quiz ask for the primary:
			// the current primary and the pod behind prod-db-rw.
			actions = append(actions, chromedp.SendKeys(fmt.Sprintf(`input[name=%q]`, name), primary))
			continue
		}
		for _, c := range qq.Choices {
			if c.Correct {
				actions = append(actions, chromedp.Click(fmt.Sprintf(`input[name=%q][value=%q]`, name, c.ID)))
			}
		}
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("answer the quiz: %v", err)
	}
}
