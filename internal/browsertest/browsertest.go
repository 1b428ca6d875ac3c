// Package browsertest drives oplab's pages in a real headless Chromium
// for tests and benchmarks: Debian's chromium (scripts/ensure-chromium.sh
// installs it; make test runs that first), driven with chromedp, with
// numbered screenshots of each step in a directory the test names, so a
// person can look at what the test saw.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// SkipShort is why browser tests skip under `go test -short` (make
// test-short): the inner loop needs no Chromium, and the pages they drive
// run on the embedded control plane.
const SkipShort = "needs Chromium; -short"

// Chromium returns the browser the tests drive: $OPLAB_CHROMIUM, or
// chromium in PATH. It skips the test under -short.
func Chromium(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip(SkipShort)
	}
	if p := os.Getenv("OPLAB_CHROMIUM"); p != "" {
		return p
	}
	for _, b := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: run scripts/ensure-chromium.sh (make test does) or set OPLAB_CHROMIUM")
	return ""
}

// New starts a headless Chromium with a fresh profile, sized as a
// 1366×768 laptop screen, and returns the context of its first tab;
// listen, when not nil, hears the tab's events. The browser stops when
// the test ends.
func New(t testing.TB, listen func(ev any)) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		// Background tabs keep their timers and sockets, as the open
		// tabs of a class would.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("lang", "en-US"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1366, 768),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	opt := []chromedp.ContextOption{chromedp.WithLogf(t.Logf)}
	if listen != nil {
		opt = append(opt, chromedp.WithListener(listen))
	}
	ctx, cancel := chromedp.NewContext(actx, opt...)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first run starts the browser, which lives as long as ctx.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// Tab opens another tab in the browser of ctx; it closes with the test.
func Tab(t testing.TB, ctx context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(ctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return tab
}

// Shots writes numbered screenshots into a directory named in the log.
type Shots struct {
	Dir  string
	root string
	n    int
}

// keepRuns is how many runs of a test keep their screenshots.
const keepRuns = 5

// NewShots makes a directory for the screenshots of the test name under
// $OPLAB_SCREENSHOTS (make test sets bin/screenshots), or else the user's
// cache directory; test runs delete their temporary directories, so the
// screenshots live elsewhere. Only the newest runs of name are kept.
func NewShots(t testing.TB, name string) *Shots {
	t.Helper()
	root := os.Getenv("OPLAB_SCREENSHOTS")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("no directory for screenshots: set OPLAB_SCREENSHOTS: %v", err)
		}
		root = filepath.Join(cache, "oplab", "screenshots")
	}
	prefix := "oplab-" + name + "-"
	dir := filepath.Join(root, prefix+time.Now().Format("20060102-150405.000"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Names sort by time: remove all but the newest runs.
	if old, _ := filepath.Glob(filepath.Join(root, prefix+"*")); len(old) > keepRuns {
		slices.Sort(old)
		for _, d := range old[:len(old)-keepRuns] {
			os.RemoveAll(d)
		}
	}
	t.Logf("screenshots in %s", dir)
	return &Shots{Dir: dir, root: root}
}

// Take captures the tab as the next numbered screenshot, name.png.
func (s *Shots) Take(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		buf, err := chromedp.CaptureScreenshot()(ctx, t)
		if err != nil {
			return err
		}
		s.n++
		return os.WriteFile(filepath.Join(s.Dir, fmt.Sprintf("%02d-%s.png", s.n, name)), buf, 0o644)
	})
}

// Keep captures the tab as name.png directly under the screenshots' root,
// replacing the previous run's: a name that does not change between runs,
// for `make screenshots` to copy into docs/images.
func (s *Shots) Keep(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		buf, err := chromedp.CaptureScreenshot()(ctx, t)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(s.root, name+".png"), buf, 0o644)
	})
}

// Step runs actions within limit and fails the test with the step's name,
// a screenshot and the page's HTML when one fails.
func (s *Shots) Step(t testing.TB, ctx context.Context, limit time.Duration, name string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		// A tab that does not answer must not hang the test's report.
		fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = chromedp.Do(fctx, s.Take("failed"))
		html, _ := chromedp.Run(fctx, chromedp.Evaluate[string](`document.body.outerHTML`))
		t.Logf("page at the failure:\n%s", html)
		t.Fatalf("%s: %v", name, err)
	}
}

// Loads runs actions that navigate (a form's submit, a link's click) and
// waits until the new page has loaded. An action that queries the page
// while it is being replaced fails with "Could not find node with given
// id"; after Loads, the next action sees the new page.
func Loads(actions ...chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.RunResponse(ctx, actions...)
		return chromedp.Void{}, err
	}
}

// TextContains waits until the element's text contains want.
func TextContains(sel, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(document.querySelector(%q)?.textContent || '').includes(%q)`, sel, want),
		chromedp.WithPollingInterval(50*time.Millisecond))
}

// ConsoleErrors returns the errors a page reported in ev: uncaught
// exceptions and console.error calls.
func ConsoleErrors(ev any) []string {
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		return []string{fmt.Sprintf("%s:%d: %s", d.URL, d.LineNumber+1, msg)}
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			var out []string
			for _, a := range e.Args {
				out = append(out, fmt.Sprintf("console.error: %s %s", a.Value, a.Description))
			}
			return out
		}
	}
	return nil
}

// Errors collects the errors a page reports, for a test to check at its end.
type Errors struct {
	mu   sync.Mutex
	list []string
}

// Listen is a listener for New.
func (e *Errors) Listen(ev any) {
	if l := ConsoleErrors(ev); len(l) > 0 {
		e.mu.Lock()
		e.list = append(e.list, l...)
		e.mu.Unlock()
	}
}

// List returns the errors so far.
func (e *Errors) List() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.list...)
}
