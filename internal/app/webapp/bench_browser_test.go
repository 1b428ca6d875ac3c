package webapp

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"oplab.dev/oplab/internal/app"
	bt "oplab.dev/oplab/internal/browsertest"
)

// The browser's side of the lab page, in headless Chromium against the
// lab server as `oplab serve` composes it, on real embedded clusters:
//
//	go test -run '^$' -bench 'Browser' -benchtime 1x -count 5 ./internal/app/webapp/

// BenchmarkBrowserStartToFirstExercise measures Start clicked → the first
// exercise ready (its Break button enabled), as the learner sees it: a
// cold start (a new cluster, the operator installed, the lab's setup).
func BenchmarkBrowserStartToFirstExercise(b *testing.B) {
	benchStarts(b, newSite(b), func() {})
}

// BenchmarkBrowserStartWarm is BenchmarkBrowserStartToFirstExercise with
// a warm pool of one failover session (oplab serve --warm failover=1):
// Start takes the prepared session. The pool's refill is outside the
// timer.
func BenchmarkBrowserStartWarm(b *testing.B) {
	s := newSiteWith(b, ServerConfig{Warm: app.PoolOptions{Sizes: map[string]int{"failover": 1}, Every: 100 * time.Millisecond}})
	benchStarts(b, s, func() {
		for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
			if ready, _, err := s.app.Warm(context.Background(), "", "failover"); err == nil && ready > 0 {
				return
			} else if time.Now().After(deadline) {
				b.Fatalf("no warm session in 3 minutes: %v", err)
			}
		}
	})
}

// benchStarts times Start clicked → first exercise ready on s's failover
// page, once per iteration, after ready (untimed) each time; the session
// is stopped after each.
func benchStarts(b *testing.B, s *site, ready func()) {
	ctx := bt.New(b, nil)
	if err := chromedp.Do(ctx, chromedp.Navigate(s.signIn()), chromedp.WaitVisible(`#labs`)); err != nil {
		b.Fatal(err)
	}
	var all []time.Duration
	for b.Loop() {
		b.StopTimer()
		ready()
		if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/labs/failover"), chromedp.WaitVisible(`#start:not([disabled])`)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		began := time.Now()
		err := within(ctx, 3*time.Minute, chromedp.Click(`#start`), chromedp.WaitVisible(`#break:not([disabled])`))
		all = append(all, time.Since(began))
		b.StopTimer()
		if err != nil {
			b.Fatalf("start the failover lab: %v", err)
		}
		s.stopSessions(b, app.LocalLearner)
		b.StartTimer()
	}
	reportQuantiles(b, all, "s", time.Second)
}

// BenchmarkBrowserConsoleGetPods measures a console command from the
// Enter key to its last output line on the page (the input enabled again
// with the output shown): `kubectl get pods` on the session's cluster,
// through the server, the allow-list and the sandbox. p50 and p99 over 20
// commands per run.
func BenchmarkBrowserConsoleGetPods(b *testing.B) {
	s := newSite(b)
	ctx := bt.New(b, nil)
	startLab(b, s, ctx)
	if err := chromedp.Do(ctx, chromedp.Click(`#tab-console`), chromedp.WaitVisible(`#console-in`)); err != nil {
		b.Fatal(err)
	}
	// The page times itself: from the Enter key's keydown to the moment
	// the input is enabled again, which is after the last chunk is shown.
	const timer = `(() => {
		const input = document.querySelector('#console-in');
		window.benchDone = 0;
		input.addEventListener('keydown', (e) => { if (e.key === 'Enter') { window.benchStart = performance.now(); window.benchDone = 0; } }, true);
		new MutationObserver(() => { if (!input.disabled && window.benchStart) window.benchDone = performance.now(); })
			.observe(input, { attributes: true, attributeFilter: ['disabled'] });
	})()`
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](timer)); err != nil {
		b.Fatal(err)
	}
	var all []time.Duration
	for b.Loop() {
		for range 20 {
			err := within(ctx, time.Minute,
				chromedp.Evaluate[chromedp.Void](`window.benchStart = 0; document.querySelector('#console-out').textContent = ''`),
				chromedp.SendKeys(`#console-in`, "kubectl get pods"+kb.Enter),
				chromedp.Poll[chromedp.Void](`window.benchDone > 0`, chromedp.WithPollingInterval(5*time.Millisecond)))
			if err != nil {
				b.Fatal(err)
			}
			ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`window.benchDone - window.benchStart`))
			if err != nil {
				b.Fatal(err)
			}
			out, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#console-out').textContent`))
			if !strings.Contains(out, "prod-db-0") {
				b.Fatalf("console output: got %q, want the pods", out)
			}
			all = append(all, time.Duration(ms*float64(time.Millisecond)))
		}
	}
	reportQuantiles(b, all, "ms", time.Millisecond)
}

// BenchmarkServerMemory30Pages measures the server's memory with 30 lab
// pages open on one session, every page with its live streams (log,
// cluster view, events): the Go heap in use after a collection and the
// process's resident memory, each before the pages opened and with them
// open, and the heap per page. The server runs in the benchmark's own
// process, so the figures are the server's plus the benchmark's small
// share.
func BenchmarkServerMemory30Pages(b *testing.B) {
	const pages = 30
	s := newSite(b)
	ctx := bt.New(b, nil)
	startLab(b, s, ctx)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		b.StopTimer()
		heap0, rss0 := serverMemory()
		tabs := make([]context.Context, pages)
		for i := range tabs {
			tabs[i] = bt.Tab(b, ctx)
			err := within(tabs[i], time.Minute, chromedp.Navigate(s.url+"/labs/failover"),
				chromedp.WaitVisible(`#log li`), chromedp.WaitReady(`#cluster .current-primary`))
			if err != nil {
				b.Fatalf("open page %d: %v", i+1, err)
			}
		}
		time.Sleep(5 * time.Second) // idle, as open tabs are
		heap1, rss1 := serverMemory()
		b.ReportMetric(float64(heap0)/(1<<20), "MiB-heap-before")
		b.ReportMetric(float64(heap1)/(1<<20), "MiB-heap-30-pages")
		b.ReportMetric(float64(int64(heap1)-int64(heap0))/pages/1024, "KiB-heap/page")
		b.ReportMetric(float64(rss0)/(1<<20), "MiB-rss-before")
		b.ReportMetric(float64(rss1)/(1<<20), "MiB-rss-30-pages")
		for _, tab := range tabs {
			_ = chromedp.Cancel(tab)
		}
		b.StartTimer()
	}
}

// startLab starts the failover lab from its page and waits until the
// first exercise is ready.
func startLab(b *testing.B, s *site, ctx context.Context) {
	b.Helper()
	err := within(ctx, 3*time.Minute, chromedp.Navigate(s.signIn()), chromedp.WaitVisible(`#labs`),
		chromedp.Navigate(s.url+"/labs/failover"), chromedp.Click(`#start`), chromedp.WaitVisible(`#break:not([disabled])`))
	if err != nil {
		b.Fatalf("start the failover lab: %v", err)
	}
}

// within runs actions in the tab of ctx within d.
func within(ctx context.Context, d time.Duration, actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// serverMemory returns the Go heap in use after a collection and the
// process's resident set size, in bytes.
func serverMemory() (heap, rss uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	status, _ := os.ReadFile("/proc/self/status")
	for line := range strings.Lines(string(status)) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kib, _ := strconv.ParseUint(f[1], 10, 64)
			rss = kib * 1024
		}
	}
	return m.HeapInuse, rss
}

// reportQuantiles reports the p50 and p99 of all in unit.
func reportQuantiles(b *testing.B, all []time.Duration, unit string, per time.Duration) {
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / float64(per) }
	b.ReportMetric(q(0.5), unit+"-p50")
	b.ReportMetric(q(0.99), unit+"-p99")
}
