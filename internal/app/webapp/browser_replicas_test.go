package webapp

import (
	"bufio"
	"cmp"
	"context"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"oplab.dev/oplab/internal/app"
	bt "oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/internal/oplog"
	"oplab.dev/oplab/internal/pgtest"
	"oplab.dev/oplab/internal/session"
)

// TestLogResumesOnAnotherServer: two servers share a PostgreSQL store, as
// oplab's replicas do (and a data directory, where the pods provider's
// replicas share the host cluster's Secrets), behind a proxy that plays a
// Service. The server the learner's page talks to dies in the
// middle of an exercise, and the page's first attempts to come back go
// where nothing answers; the page gives them up, reconnects to the other
// server, and its operator log goes on where it was (nothing shown twice,
// nothing shown before cleared), the Check passes there and the time to
// recovery is the one the surviving server watched.
func TestLogResumesOnAnotherServer(t *testing.T) {
	proxy := newFrontProxy(t)
	data, store := t.TempDir(), pgtest.Fresh(t)
	first := startSite(t, app.Config{Store: store}, ServerConfig{}, data, proxy.addr())
	second := startSite(t, app.Config{Store: store}, ServerConfig{}, data, proxy.addr())
	proxy.send(first)

	var errs bt.Errors
	ctx := bt.New(t, errs.Listen)
	sh := bt.NewShots(t, "log-resumes")
	step := func(name string, limit time.Duration, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sh.Step(t, ctx, limit, name, actions...)
	}
	front := "http://" + proxy.addr()
	step("start the failover lab on the first server", 3*time.Minute,
		chromedp.Navigate(first.srv.SignInURL(front)),
		chromedp.Navigate(front+"/labs/failover"),
		chromedp.WaitVisible(`#start:not([disabled])`),
		chromedp.Click(`#start`),
		chromedp.WaitVisible(`#exercise-panel`),
		chromedp.WaitReady(`#log > li.reconcile.idle`))
	id := activeSession(t, first)

	step("break it", time.Minute,
		chromedp.WaitVisible(`#break:not([disabled])`),
		chromedp.Click(`#break`),
		bt.TextContains("#clock", "Fault live for"))
	before := markLog(t, ctx)
	killed := time.Now()
	// The first server's connections drop with it, and for a moment the
	// page's attempts to come back go where nothing answers them, as a
	// Service's still pointing at the dead replica's address do.
	proxy.hold()
	first.die()
	step("the page's attempt to come back hangs", time.Minute,
		chromedp.Poll[chromedp.Void](`document.querySelector('#log-status').textContent === 'Reconnecting…'`,
			chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(time.Minute)))
	// One of the page's live streams tries into the void before anything
	// goes anywhere. A browser opens one WebSocket to a host at a time, so
	// while that attempt hangs the others wait behind it.
	for deadline := time.Now().Add(time.Minute); !proxy.heldFor("/streams/", "/api/events"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the page's streams made no attempt to come back: %q", proxy.heldPaths())
		}
	}
	proxy.send(second)
	step("the page comes back to the second server and its log goes on", 2*time.Minute,
		chromedp.WaitReady(`#log > li.reconcile[data-kinds~="promoted"].after-t0`),
		sh.Take("resumed"))
	after := logWentOn(t, ctx, before)
	if proxy.served(second) == 0 {
		t.Fatal("the second server served no connection")
	}
	// Every line of the operator's log, once and in order, as far as the
	// page has come.
	want := operatorLog(t, second, id)
	if len(after) > len(want) || !slices.Equal(after, want[:len(after)]) {
		t.Errorf("the page's log is not the operator's log from its start:\npage %q\nlog  %q", after, want[:min(len(after), len(want))])
	}

	// The surviving server's goal watcher saw the recovery (the learner
	// looks at the log before pressing Check).
	waitWatched(t, second, id, "delete-primary")
	step("check passes on the second server", 2*time.Minute, checkUntilPassed())
	checked := time.Now()
	rec := recovered(t, second, id, "delete-primary")
	if rec.T1Source != session.T1Watched {
		t.Errorf("time to recovery found by %q, want %q (the surviving server watches the goals)", rec.T1Source, session.T1Watched)
	}
	broke := chaosAt(t, second, id, "delete-primary")
	if ttr := rec.Recovery.Duration(); ttr <= 0 || ttr > checked.Sub(broke) {
		t.Errorf("time to recovery %v, want more than 0 and at most the %v from the fault to the check", ttr, checked.Sub(broke))
	}
	t.Logf("the page was back on the second server %v after the first died; time to recovery %v", time.Since(killed).Round(time.Second), rec.Recovery.Duration())
	if e := errs.List(); len(e) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(e, "\n"))
	}
}

// markLog notes, before the server a page's log comes from goes, the lines
// the log shows and its first line's element (a page that started its log
// over would show that line again in a new element), and that the
// failover's pass is still to come: the operator fails over after its
// failoverDelay (4 s), so that pass comes from the next server.
func markLog(t *testing.T, ctx context.Context) []string {
	t.Helper()
	before := eval[[]string](t, ctx, logLines)
	if !eval[bool](t, ctx, `(window.firstLine = document.querySelector('#log > li')) !== null`) {
		t.Fatal("the log shows no line")
	}
	if eval[bool](t, ctx, `document.querySelector('#log > li.reconcile[data-kinds~="promoted"].after-t0') !== null`) {
		t.Fatal("the failover's pass was shown before the server went: nothing is left to come from the next")
	}
	return before
}

// logWentOn checks, once the page's log comes from the next server, that
// it went on — its first line's element still there, the lines shown
// before unchanged — and returns the lines it shows.
func logWentOn(t *testing.T, ctx context.Context, before []string) []string {
	t.Helper()
	if !eval[bool](t, ctx, `window.firstLine.isConnected`) {
		t.Error("the log was cleared and drawn again on the next server, want it to go on")
	}
	after := eval[[]string](t, ctx, logLines)
	if len(after) < len(before) || !slices.Equal(after[:len(before)], before) {
		t.Errorf("the lines shown before the server went changed:\nbefore %q\nafter  %q", before, after[:min(len(before), len(after))])
	}
	return after
}

// logLines is each line the page's log shows, by its time (in ms) and
// message.
const logLines = `[...document.querySelectorAll('#log > li')].map((li) => li.dataset.time + ' ' + li.querySelector('.msg').textContent)`

// operatorLog is each line of session id's operator log as logLines shows
// it.
func operatorLog(t *testing.T, s *site, id string) []string {
	t.Helper()
	src, err := s.app.OperatorLog(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = src.Lines(t.Context(), false, func(l oplog.Line) error {
		e := oplog.ParseEntry(l)
		msg := cmp.Or(e.Message, e.Raw)
		ms := int64(0)
		if !e.Time.IsZero() {
			ms = e.Time.UnixMilli()
		}
		out = append(out, strconv.FormatInt(ms, 10)+" "+msg)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitWatched waits until a goal watcher recorded that the goals of
// exercise hold again.
func waitWatched(t *testing.T, s *site, id, exercise string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		tl, err := s.app.Timeline(t.Context(), id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		evs := tl.Events
		for _, ev := range evs {
			if ev.Kind == session.KindWatch && ev.Exercise == exercise && !ev.Held.IsZero() {
				return
			}
		}
	}
	t.Fatalf("no goal watcher recorded the recovery of %s within a minute", exercise)
}

// chaosAt is when the session's fault of exercise went live.
func chaosAt(t *testing.T, s *site, id, exercise string) time.Time {
	t.Helper()
	tl, err := s.app.Timeline(t.Context(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	evs := tl.Events
	for _, ev := range evs {
		if ev.Kind == session.KindChaos && ev.Exercise == exercise && !ev.T0.IsZero() {
			return ev.T0
		}
	}
	t.Fatalf("no chaos event of %s in the timeline", exercise)
	return time.Time{}
}

// frontProxy is a TCP proxy before two servers, as a Service is before two
// replicas: each connection goes to the current server, and a new current
// server drops every connection to the old one, as its death would.
type frontProxy struct {
	ln net.Listener
	wg sync.WaitGroup

	mu      sync.Mutex
	to      *site
	holding bool       // new connections go nowhere and are never answered
	held    []net.Conn // until the test ends
	// heldLines are the request lines of the held connections.
	heldLines []string
	conns     map[net.Conn]*site
	counts    map[*site]int
}

func newFrontProxy(t *testing.T) *frontProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &frontProxy{ln: ln, conns: map[net.Conn]*site{}, counts: map[*site]int{}}
	p.wg.Go(p.serve)
	t.Cleanup(func() {
		ln.Close()
		p.drop(nil)
		p.mu.Lock()
		for _, c := range p.held {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// hold drops every connection and holds new ones unanswered, as a Service
// still sending to a replica whose address is gone does: the client's
// connection attempt neither succeeds nor fails. send ends it; the held
// connections stay unanswered.
func (p *frontProxy) hold() {
	p.mu.Lock()
	p.to, p.holding = nil, true
	p.mu.Unlock()
	p.drop(nil)
}

// heldFor reports whether a held connection asked for a path holding one
// of parts.
func (p *frontProxy) heldFor(parts ...string) bool {
	return slices.ContainsFunc(p.heldPaths(), func(path string) bool {
		return slices.ContainsFunc(parts, func(part string) bool { return strings.Contains(path, part) })
	})
}

// heldPaths are the request lines the held connections sent.
func (p *frontProxy) heldPaths() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.heldLines)
}

func (p *frontProxy) addr() string { return p.ln.Addr().String() }

// send makes s the current server and drops the connections to the others.
func (p *frontProxy) send(s *site) {
	p.mu.Lock()
	p.to, p.holding = s, false
	p.mu.Unlock()
	p.drop(s)
}

// served is how many connections went to s.
func (p *frontProxy) served(s *site) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[s]
}

// drop closes the connections that do not go to keep.
func (p *frontProxy) drop(keep *site) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, s := range p.conns {
		if s != keep {
			c.Close()
			delete(p.conns, c)
		}
	}
}

func (p *frontProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.holding {
			p.held = append(p.held, in)
			p.mu.Unlock()
			// Read what it asks for, never answer.
			p.wg.Go(func() {
				line, _ := bufio.NewReader(in).ReadString('\n')
				p.mu.Lock()
				p.heldLines = append(p.heldLines, strings.TrimSpace(line))
				p.mu.Unlock()
			})
			continue
		}
		to := p.to
		p.counts[to]++
		p.mu.Unlock()
		out, err := net.Dial("tcp", strings.TrimPrefix(to.url, "http://"))
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns[in], p.conns[out] = to, to
		p.mu.Unlock()
		// Either side's end, or send's drop, ends both.
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		p.wg.Go(func() { pipe(out, in) })
		p.wg.Go(func() { pipe(in, out) })
	}
}
