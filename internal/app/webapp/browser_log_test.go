package webapp

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	bt "oplab.dev/oplab/internal/browsertest"
)

// TestLogPanel is the operator's log on the lab page, in headless Chromium
// against a real embedded cluster and the reference operator: a reconcile
// pass is drawn as its Watch, Diff and Act, an idle pass dimmed without
// them; a line opens (click and keyboard) to all its fields; the log is
// filtered by object and by what a pass did; a check's "show the pass"
// jumps to the last pass before the checks' verdict.
func TestLogPanel(t *testing.T) {
	s := newSite(t)
	var errs bt.Errors
	ctx := bt.New(t, errs.Listen)
	sh := bt.NewShots(t, "log-panel")
	step := func(name string, limit time.Duration, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sh.Step(t, ctx, limit, name, actions...)
	}
	step("start the failover lab", 3*time.Minute,
		chromedp.Navigate(s.signIn()),
		chromedp.Navigate(s.url+"/labs/failover"),
		chromedp.WaitVisible(`#start:not([disabled])`),
		chromedp.Click(`#start`),
		chromedp.WaitVisible(`#exercise-panel`))

	// The bootstrap acted: a pass with what it read, what differed and
	// what it did, with its timing.
	acted := `#log > li.reconcile:not(.idle)`
	step("a pass is drawn as Watch, Diff, Act", time.Minute,
		chromedp.WaitVisible(acted+` .loop .stage.act:not(.none)`),
		sh.Take("passes"))
	stages := eval[[]string](t, ctx, `[...document.querySelector('`+acted+`:has(.stage.act:not(.none)) .loop').children]
		.map((s) => s.querySelector('.step').textContent + '|' + s.querySelector('.text').textContent)`)
	if len(stages) != 4 {
		t.Fatalf("a pass's loop: got %q, want Watch, Diff, Act and status", stages)
	}
	for i, want := range []string{"Watch|pods: ", "Diff|", "Act|", "status|"} {
		if !strings.HasPrefix(stages[i], want) {
			t.Errorf("stage %d: got %q, want it to start %q", i, stages[i], want)
		}
	}
	if got := eval[string](t, ctx, `document.querySelector('`+acted+` .timing').textContent`); !strings.Contains(got, "took ") {
		t.Errorf("a pass's timing: got %q, want how long it took", got)
	}

	// The operator's passes after the bootstrap find nothing to do.
	step("an idle pass is told apart", time.Minute,
		chromedp.WaitReady(`#log > li.reconcile.idle`))
	idle := eval[map[string]any](t, ctx, `(() => {
		const li = document.querySelector('#log > li.reconcile.idle');
		return { loop: li.querySelector('.loop') !== null, opacity: Number(getComputedStyle(li).opacity), badge: li.querySelector('.badge')?.textContent ?? '' };
	})()`)
	if idle["loop"] != false || idle["opacity"].(float64) >= 1 || idle["badge"] != "idle" {
		t.Errorf("an idle pass: got %v, want no loop, dimmed, marked idle", idle)
	}

	// Any line opens: by a click on its head, and from the keyboard.
	step("a click opens a line to all its fields", 30*time.Second,
		chromedp.Click(acted+` .head .msg`),
		chromedp.WaitVisible(acted+`[aria-expanded="true"] .detail`),
		sh.Take("opened"))
	keys := eval[[]string](t, ctx, `[...document.querySelector('`+acted+`[aria-expanded="true"] .detail').querySelectorAll('dt')].map((d) => d.textContent)`)
	for _, want := range []string{"Watch", "took", "object", "controller", "raw"} {
		if !slices.Contains(keys, want) {
			t.Errorf("an opened pass shows %q, want %s among them", keys, want)
		}
	}
	step("Enter opens and closes a line", 30*time.Second,
		chromedp.Focus(`#log > li.reconcile.idle`),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`#log > li.reconcile.idle[aria-expanded="true"] .detail`),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitReady(`#log > li.reconcile.idle[aria-expanded="false"]`))

	// Break it: the operator fails over, and its passes say so.
	step("break it and see the failover's passes", 2*time.Minute,
		chromedp.WaitVisible(`#break:not([disabled])`),
		chromedp.Click(`#break`),
		bt.TextContains("#clock", "Fault live for"),
		chromedp.WaitReady(`#log > li.reconcile[data-kinds~="promoted"].after-t0`))

	step("filter by what was done", 30*time.Second,
		chromedp.SendKeys(`#log-did`, "promoted"),
		sh.Take("filtered-promoted"))
	// What a shown line did: its kinds, and its acts.
	shownDid := `[...document.querySelectorAll('#log > li')].filter((li) => !li.hidden)
		.map((li) => (li.dataset.kinds ?? '') + '|' + (li.querySelector('.act .text')?.textContent ?? ''))`
	shown := eval[[]string](t, ctx, shownDid)
	all := eval[int](t, ctx, `document.querySelectorAll('#log > li').length`)
	if len(shown) == 0 || len(shown) >= all {
		t.Errorf("filtered by promoted: %d of %d lines shown, want some, not all", len(shown), all)
	}
	promoted := 0
	for _, d := range shown {
		kinds, acts, _ := strings.Cut(d, "|")
		if slices.Contains(strings.Fields(kinds), "promoted") {
			promoted++
		} else if !strings.Contains(acts, "promoted") {
			t.Errorf("filtered by promoted: a line that did %q is shown", d)
		}
	}
	if promoted == 0 {
		t.Errorf("filtered by promoted: got %q, want a pass that promoted", shown)
	}
	// Free text over what was done: the election's words.
	step("filter by words of what was done", 30*time.Second,
		setInput(`#log-did`, "", "input"),
		chromedp.SendKeys(`#log-did`, "furthest ahead"))
	shown = eval[[]string](t, ctx, shownDid)
	if len(shown) == 0 {
		t.Error("filtered by 'furthest ahead': no pass shown, want the election")
	}
	for _, d := range shown {
		if !strings.Contains(d, "furthest ahead") {
			t.Errorf("filtered by 'furthest ahead': a line that did %q is shown", d)
		}
	}
	step("filter by object", 30*time.Second,
		setInput(`#log-did`, "", "input"),
		setInput(`#log-object`, "default/prod-db", "change"))
	objects := eval[[]string](t, ctx, `[...document.querySelectorAll('#log > li')].filter((li) => !li.hidden).map((li) => li.dataset.object ?? '')`)
	if len(objects) == 0 {
		t.Error("filtered by default/prod-db: no line shown")
	}
	for _, o := range objects {
		if o != "default/prod-db" {
			t.Errorf("filtered by default/prod-db: a line about %q is shown", o)
		}
	}

	// Check, then jump from a check to the pass the checks saw last.
	step("check, and show a check's pass", 2*time.Minute,
		chromedp.WaitVisible(`#check:not([disabled])`),
		chromedp.Click(`#check`),
		chromedp.WaitVisible(`#results .show-pass`),
		chromedp.Click(`#results .show-pass`),
		chromedp.WaitVisible(`#log > li.jumped[aria-expanded="true"] .detail`),
		sh.Take("jumped"))
	jump := eval[map[string]any](t, ctx, `(() => {
		const at = Number(document.querySelector('#results .show-pass').dataset.at);
		const passes = [...document.querySelectorAll('#log > li.reconcile')];
		const before = passes.filter((li) => Number(li.dataset.time) <= at);
		const j = document.querySelector('#log > li.jumped');
		const list = document.querySelector('#log').getBoundingClientRect();
		const r = j.getBoundingClientRect();
		return {
			at, jumped: passes.indexOf(j), want: passes.indexOf(before[before.length - 1]),
			jumps: document.querySelectorAll('#log > li.jumped').length,
			inView: r.bottom > list.top && r.top < list.bottom, hidden: j.hidden,
			tab: document.querySelector('#tab-log').getAttribute('aria-selected'),
			following: document.querySelector('#log-follow').getAttribute('aria-pressed'),
		};
	})()`)
	if jump["at"].(float64) <= 0 || jump["jumped"] != jump["want"] || jump["jumped"].(float64) < 0 {
		t.Errorf("show the pass: got %v, want the last pass at or before the checks' verdict", jump)
	}
	if jump["jumps"] != float64(1) || jump["inView"] != true || jump["hidden"] != false || jump["tab"] != "true" || jump["following"] != "false" {
		t.Errorf("show the pass: got %v, want one pass highlighted, shown in the log's tab, following paused", jump)
	}
	if e := errs.List(); len(e) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(e, "\n"))
	}
}

// setInput sets a control's value as a person would, with the event that
// tells the page (chromedp.SetValue writes "undefined" for "").
func setInput(sel, value, event string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const e = document.querySelector(%q);
		e.value = %q;
		e.dispatchEvent(new Event(%q));
	})()`, sel, value, event))
}
