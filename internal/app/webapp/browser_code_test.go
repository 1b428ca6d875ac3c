package webapp

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	bt "oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/labs"
)

// TestBrowserWritesAController is the write-reconciler lab in headless
// Chromium on a fresh session of a real embedded cluster: the code panel
// holds the scaffold; a line that does not compile is marked on its line
// and listed, and the controller that runs goes on; the reference
// solution, typed over the scaffold, builds and runs; its passes appear in
// the log panel; and Check passes the first exercise.
func TestBrowserWritesAController(t *testing.T) {
	s := newSite(t)
	var errs bt.Errors
	ctx := bt.New(t, errs.Listen)
	sh := bt.NewShots(t, "write-reconciler")
	step := func(name string, limit time.Duration, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sh.Step(t, ctx, limit, name, actions...)
	}
	const ctl = "internal/controller/webapp_controller.go"
	step("start the lab and open the code panel", 5*time.Minute,
		chromedp.Navigate(s.signIn()),
		chromedp.Navigate(s.url+"/labs/write-reconciler"),
		chromedp.WaitVisible(`#start:not([disabled])`),
		chromedp.Click(`#start`),
		chromedp.WaitVisible(`#exercise-panel`),
		chromedp.Click(`#tab-code`),
		chromedp.WaitVisible(`#code`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#code-file').value === '`+ctl+`' && document.querySelector('#code').value.includes('func (r *WebAppReconciler) Reconcile')`),
		sh.Take("scaffold"))

	// An edit that does not compile: marked on its line, listed, and
	// the controller that ran is left running.
	step("a compile error is shown on its line", 3*time.Minute,
		chromedp.Evaluate[chromedp.Void](`(() => {
			const a = document.querySelector('#code');
			a.value = a.value.replace('return ctrl.Result{}, nil\n}', 'return ctrl.Result{}, nil, undefinedThing\n}');
			a.dispatchEvent(new Event('input'));
		})()`),
		chromedp.Click(`#code-run`),
		chromedp.WaitVisible(`#code-errors li`),
		sh.Take("compile-error"))
	code := eval[string](t, ctx, `document.querySelector('#code').value`)
	line := 1 + strings.Count(code[:strings.Index(code, "undefinedThing")], "\n")
	got := eval[map[string]any](t, ctx, `(() => ({
		listed: document.querySelector('#code-errors li button').dataset.file + ':' + document.querySelector('#code-errors li button').dataset.line,
		marked: [...document.querySelectorAll('#code-lines .bad')].map((s) => s.textContent.trim()),
	}))()`)
	if want := fmt.Sprintf("%s:%d", ctl, line); got["listed"] != want {
		t.Errorf("the first compile error names %v, want %s", got["listed"], want)
	}
	if marked, _ := json.Marshal(got["marked"]); !strings.Contains(string(marked), fmt.Sprintf(`"%d"`, line)) {
		t.Errorf("lines marked in the gutter: %s, want %d among them", marked, line)
	}

	// The reference solution, as the learner would type it.
	sol, err := labs.Solution("write-reconciler")
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(sol, ctl)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := json.Marshal(string(b))
	step("the solution builds and runs", 3*time.Minute,
		chromedp.Evaluate[chromedp.Void](`(() => {
			const a = document.querySelector('#code');
			a.value = `+string(src)+`;
			a.dispatchEvent(new Event('input'));
		})()`),
		chromedp.Click(`#code-run`),
		bt.TextContains("#code-out", "runs as your controller"),
		sh.Take("running"))
	if n := eval[int](t, ctx, `document.querySelectorAll('#code-lines .bad').length`); n != 0 {
		t.Errorf("%d lines still marked bad after a build that compiled", n)
	}

	step("check passes, and the controller's passes are in the log", 4*time.Minute,
		chromedp.Click(`#check`),
		bt.TextContains("#results", "childrenMatchSpec"),
		chromedp.WaitVisible(`#next`),
		chromedp.Click(`#tab-log`),
		bt.TextContains("#log", "check-"),
		sh.Take("checked"))
	if e := errs.List(); len(e) > 0 {
		t.Errorf("the page reported errors: %v", e)
	}
}
