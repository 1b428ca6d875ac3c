package server

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/web"
)

// codeLearning is the scripted lab as one whose learner writes the
// controller: its page has the code panel.
type codeLearning struct{ *scriptedLearning }

func (c codeLearning) Lab(ctx context.Context, id, lang string) (*LabView, error) {
	v, err := c.scriptedLearning.Lab(ctx, id, lang)
	if v != nil {
		v.Code = true
	}
	return v, err
}

// TestBrowserCodePanel: the code panel draws Go's syntax in colour behind
// the learner's text, laid out as the text is; Format puts gofmt's answer
// in place of badly indented source, an edit the learner can undo; a file
// that does not parse is left as it is, its error listed and marked on
// its line, and the error's link goes to the line, as the YAML editor's
// error goes to its own. (The panel against a real build:
// TestBrowserWritesAController in internal/app/webapp.)
func TestBrowserCodePanel(t *testing.T) {
	app := newFakeApp()
	lab := newScriptedLearning(app.learning, newFakeStreams())
	lab.sessions = map[string]*SessionRef{"alice-1": {ID: "alice-1", Learner: "local", Lab: "failover", State: "ready"}}
	code := &fakeCode{}
	cfg := app.config(Config{Console: fakeConsole{}, Web: web.FS, Code: code})
	cfg.Learning = codeLearning{lab}
	ts, s := serveFake(t, cfg)

	var pageErrs browsertest.Errors
	ctx := browser(t, pageErrs.Listen)
	sh := newShots(t, "code")
	eval := func(js string, v any) {
		t.Helper()
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
	}
	// setCode types src into the panel as an edit would arrive.
	setCode := func(src string) chromedp.Action[chromedp.Void] {
		b, _ := json.Marshal(src)
		return chromedp.Evaluate[chromedp.Void](`(() => {
			const a = document.querySelector('#code');
			a.value = ` + string(b) + `;
			a.dispatchEvent(new Event('input'));
		})()`)
	}
	// shown is the text the colours draw, a line per block.
	const shown = `[...document.querySelectorAll('#code-hl .ln')].map((l) => l.textContent === ' ' ? '' : l.textContent).join('\n')`

	sh.step(t, ctx, "open the code panel",
		chromedp.Navigate(s.SignInURL(ts.URL)),
		chromedp.Navigate(ts.URL+"/labs/failover"),
		chromedp.WaitVisible(`#tab-code`),
		chromedp.Click(`#tab-code`),
		chromedp.WaitVisible(`#code`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#code-file').value === 'internal/controller/webapp_controller.go' && document.querySelector('#code-hl .kw') !== null`),
		sh.take("highlighted"))

	var hl struct {
		Tokens            map[string][]string
		Same              bool
		Font, Area        []string
		Color, CaretColor string
	}
	eval(`(() => {
		const a = document.querySelector('#code'), h = document.querySelector('#code-hl');
		const tokens = {};
		for (const c of ['kw', 'type', 'builtin', 'str', 'num', 'com']) tokens[c] = [...h.querySelectorAll('.' + c)].map((s) => s.textContent);
		const layout = (e) => { const s = getComputedStyle(e); return [s.font, s.lineHeight, s.tabSize, s.paddingTop, s.paddingLeft, s.whiteSpace, s.letterSpacing]; };
		const st = getComputedStyle(a);
		return { tokens, same: `+shown+` === a.value, font: layout(h), area: layout(a), color: st.color, caretColor: st.caretColor };
	})()`, &hl)
	for cls, want := range map[string][]string{
		"kw":      {"package", "import", "func", "var", "return"},
		"type":    {"int", "error"},
		"builtin": {"len", "nil"},
		"str":     {`"context"`, `"a \"string\""`, "'x'", "`raw", "string`"},
		"num":     {"0x1F"},
		"com":     {"// Reconcile makes the WebApp's children match its spec.", "// a comment"},
	} {
		for _, w := range want {
			if !slices.Contains(hl.Tokens[cls], w) {
				t.Errorf("spans of class %s: got %q, want %q among them", cls, hl.Tokens[cls], w)
			}
		}
	}
	for _, notKw := range []string{"Reconcile", "ctx", "context", "Context", "name"} {
		for cls, got := range hl.Tokens {
			if slices.Contains(got, notKw) {
				t.Errorf("%q is coloured as %s: only keywords, predeclared names, literals and comments are", notKw, cls)
			}
		}
	}
	if !hl.Same {
		t.Error("the coloured text is not the textarea's text")
	}
	if strings.Join(hl.Font, "|") != strings.Join(hl.Area, "|") {
		t.Errorf("the colours are laid out as %q, the textarea's text as %q: they must match", hl.Font, hl.Area)
	}
	if hl.Color != "rgba(0, 0, 0, 0)" || hl.CaretColor == "rgba(0, 0, 0, 0)" || hl.CaretColor == "" {
		t.Errorf("the textarea's text is %s and its caret %s, want the text transparent and the caret visible", hl.Color, hl.CaretColor)
	}

	// A file longer and wider than the panel: the colours and the line
	// numbers follow the textarea to its far corner.
	long := "package controller\n\n" + strings.Repeat("var _ = \""+strings.Repeat("x", 300)+"\" // long\n", 200)
	sh.step(t, ctx, "the colours scroll with the text",
		setCode(long),
		chromedp.Poll[chromedp.Void](shown+` === document.querySelector('#code').value`),
		chromedp.Evaluate[chromedp.Void](`(() => { const a = document.querySelector('#code'); a.scrollTop = a.scrollHeight; a.scrollLeft = a.scrollWidth; })()`),
		chromedp.Poll[chromedp.Void](`(() => {
			const a = document.querySelector('#code'), h = document.querySelector('#code-hl'), g = document.querySelector('#code-lines');
			return a.scrollTop > 0 && a.scrollLeft > 0 && h.scrollTop === a.scrollTop && h.scrollLeft === a.scrollLeft && g.scrollTop === a.scrollTop;
		})()`),
		sh.take("scrolled"))

	messy := "package controller\n\nimport (\n\"fmt\"\n  \"context\"\n)\n\nfunc  Reconcile( ctx context.Context)error{\n    fmt.Println( \"hi\" )\n  return nil}\n"
	tidy := "package controller\n\nimport (\n\t\"context\"\n\t\"fmt\"\n)\n\nfunc Reconcile(ctx context.Context) error {\n\tfmt.Println(\"hi\")\n\treturn nil\n}\n"
	tidyJS, _ := json.Marshal(tidy)
	sh.step(t, ctx, "Format puts gofmt's answer in place",
		setCode(messy),
		chromedp.Poll[chromedp.Void](shown+` === document.querySelector('#code').value`),
		chromedp.Click(`#code-format`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#code').value === `+string(tidyJS)),
		textContains("#code-out", "Formatted as gofmt does."),
		chromedp.Poll[chromedp.Void](shown+` === `+string(tidyJS)),
		sh.take("formatted"))
	if calls := strings.Join(code.calls(), "\n"); !strings.Contains(calls, "format internal/controller/webapp_controller.go") {
		t.Errorf("calls: got %q, want the open file formatted", calls)
	}
	var undone string
	eval(`(() => { document.querySelector('#code').focus(); document.execCommand('undo'); return document.querySelector('#code').value; })()`, &undone)
	if undone != messy {
		t.Errorf("after an undo: got %q, want the source before Format", undone)
	}

	broken := "package controller\n\nfunc f() {\n\tx := := 1\n}\n"
	sh.step(t, ctx, "a syntax error is marked on its line",
		setCode(broken),
		chromedp.Click(`#code-format`),
		chromedp.WaitVisible(`#code-errors li`),
		textContains("#code-out", "It does not parse ("),
		sh.take("syntax-error"))
	var marks struct {
		Listed, Value       string
		Gutter, Lines       []string
		SelStart, LineStart int
	}
	eval(`(() => {
		const a = document.querySelector('#code');
		return {
			listed: document.querySelector('#code-errors li button').textContent,
			gutter: [...document.querySelectorAll('#code-lines .bad')].map((s) => s.textContent.trim()),
			lines: [...document.querySelectorAll('#code-hl .ln')].flatMap((l, i) => l.classList.contains('bad') ? [String(i + 1)] : []),
			value: a.value,
			selStart: a.selectionStart,
			lineStart: a.value.split('\n').slice(0, 3).join('\n').length + 1,
		};
	})()`, &marks)
	if want := "internal/controller/webapp_controller.go:4:"; !strings.HasPrefix(marks.Listed, want) {
		t.Errorf("the error listed: got %q, want %s<column>", marks.Listed, want)
	}
	// The parser names line 4, and the end of the file after it.
	if !slices.Contains(marks.Gutter, "4") || !slices.Equal(marks.Gutter, marks.Lines) {
		t.Errorf("lines marked: gutter %q, colours %q, want line 4 among them, the same in both", marks.Gutter, marks.Lines)
	}
	if marks.Value != broken {
		t.Errorf("a file that does not parse was changed to %q", marks.Value)
	}
	if marks.SelStart != marks.LineStart {
		t.Errorf("after the error: the caret is at %d, want %d, the start of line 4", marks.SelStart, marks.LineStart)
	}
	// An edit clears the mark, and the error's link goes back to its line.
	sh.step(t, ctx, "the error's link goes to its line",
		chromedp.Evaluate[chromedp.Void](`(() => { const a = document.querySelector('#code'); a.setSelectionRange(0, 0); })()`),
		chromedp.Click(`#code-errors li button`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#code').selectionStart === `+
			`document.querySelector('#code').value.split('\n').slice(0, 3).join('\n').length + 1`),
		setCode(broken),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('#code-lines .bad, #code-hl .ln.bad').length === 0`))

	// The YAML editor goes to its error's line with the same helper.
	sh.step(t, ctx, "the YAML editor goes to its error's line",
		chromedp.Click(`#tab-editor`),
		chromedp.WaitVisible(`#editor`),
		chromedp.Evaluate[chromedp.Void](`(() => {
			const a = document.querySelector('#editor');
			a.value = 'kind: Pod\nmetadata:\n  bad: field\n';
			a.dispatchEvent(new Event('input'));
		})()`),
		chromedp.Click(`#editor-dryrun`),
		chromedp.WaitVisible(`#editor-lines .bad`),
		chromedp.Poll[chromedp.Void](`document.querySelector('#editor-lines .bad').textContent.trim() === '3' && `+
			`document.querySelector('#editor').selectionStart === 'kind: Pod\nmetadata:\n'.length && `+
			`document.querySelector('#editor').selectionEnd === 'kind: Pod\nmetadata:\n  bad: field'.length`),
		sh.take("yaml-error"))

	if errs := pageErrs.List(); len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
}
