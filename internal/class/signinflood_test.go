package class_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/store"
	"oplab.dev/oplab/web"
)

// These tests drive the instructor's sign-in form over real HTTP, through
// the real web server, the class service (argon2id at 64 MiB a hash, its
// default limits) and a SQLite store: the path a flood takes. They sit
// here, beside the limits they measure, so that the server's own tests
// stay free of the layers below it.

// classSignIns is the server's SignIns as far as an instructor's sign-in
// goes, mapped onto the class service as the web adapter maps it. Any
// other call, and any call of Learning or Classroom, panics on a nil
// interface: the flood reaches nothing else.
type classSignIns struct {
	server.SignIns
	svc *class.Service
}

func (a classSignIns) SignInInstructor(ctx context.Context, cr server.Credentials) (*server.SignIn, error) {
	si, err := a.svc.SignInInstructor(ctx, class.Attempt{Client: cr.Client, Name: cr.Name, Password: cr.Password, Device: cr.Device})
	var wait *class.WaitError
	switch {
	case errors.As(err, &wait):
		return nil, &server.Refusal{Reason: server.RefusalTooMany, Retry: wait.Wait, Err: err}
	case errors.Is(err, class.ErrBadCredentials):
		return nil, fmt.Errorf("%w: %w", server.ErrBadCredentials, err)
	case err != nil:
		return nil, err
	}
	return &server.SignIn{ID: si.ID, Instructor: si.Instructor, Admin: si.Admin, Expires: si.Expires}, nil
}

func (a classSignIns) SignedIn(ctx context.Context, id string) (*server.SignIn, error) {
	si, err := a.svc.SignedIn(ctx, id)
	if errors.Is(err, class.ErrSignedOut) {
		return nil, fmt.Errorf("%w: %w", server.ErrSignedOut, err)
	}
	if err != nil {
		return nil, err
	}
	return &server.SignIn{Learner: si.Learner, Instructor: si.Instructor, Admin: si.Admin, Expires: si.Expires}, nil
}

// floodSite is the server on loopback with instructors grace and bob.
type floodSite struct {
	url string
}

const (
	gracePassword = "grace's long password"
	bobPassword   = "bob's long password"
)

func newFloodSite(tb testing.TB) *floodSite {
	tb.Helper()
	ctx := context.Background()
	data := tb.TempDir()
	st, err := store.Open(ctx, filepath.Join(data, store.FileName))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	svc, err := class.New(class.Options{Store: st, Labs: course.Embedded().Labs})
	if err != nil {
		tb.Fatal(err)
	}
	for name, pw := range map[string]string{"grace": gracePassword, "bob": bobPassword} {
		if _, err := svc.AddInstructor(ctx, name, pw, false); err != nil {
			tb.Fatal(err)
		}
	}
	ts := httptest.NewUnstartedServer(nil)
	srv, err := server.New(server.Config{Learning: struct{ server.Learning }{}, Classroom: struct{ server.Classroom }{}, SignIns: classSignIns{svc: svc}, Web: web.FS, DataDir: data,
		Hosts: server.Hosts(ts.Listener.Addr().String()), Learner: "local"})
	if err != nil {
		tb.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	tb.Cleanup(func() { ts.Close(); srv.Close() })
	return &floodSite{url: ts.URL}
}

// browser is a client that connects from its own loopback address (Linux
// routes all of 127/8 to lo), as a separate machine would, and holds the
// sign-in form's cookie and token.
type browser struct {
	c     *http.Client
	token string
}

func (f *floodSite) browser(tb testing.TB, addr string) *browser {
	tb.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 10 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 512}
	tb.Cleanup(tr.CloseIdleConnections)
	jar, _ := cookiejar.New(nil)
	b := &browser{c: &http.Client{Jar: jar, Transport: tr, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	resp, err := b.c.Get(f.url + "/instructor/login")
	if err != nil {
		tb.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, rest, ok := strings.Cut(string(page), `name="_csrf" value="`)
	if !ok {
		tb.Fatalf("no form token on the sign-in page (%d)", resp.StatusCode)
	}
	b.token, _, _ = strings.Cut(rest, `"`)
	return b
}

// signIn posts the form and returns the status and Retry-After.
func (f *floodSite) signIn(b *browser, name, password string) (int, string, error) {
	v := url.Values{"name": {name}, "password": {password}, "_csrf": {b.token}}
	resp, err := b.c.Post(f.url+"/instructor/login", "application/x-www-form-urlencoded", strings.NewReader(v.Encode()))
	if err != nil {
		return 0, "", err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

// signInUntilIn signs in with the right password, waiting out each 429's
// Retry-After as a person would, and returns how long it took.
func (f *floodSite) signInUntilIn(b *browser, name, password string, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for time.Since(start) < limit {
		code, retry, err := f.signIn(b, name, password)
		switch {
		case err != nil:
			return 0, err
		case code == http.StatusSeeOther:
			return time.Since(start), nil
		case code != http.StatusTooManyRequests:
			return 0, fmt.Errorf("sign in as %s: got %d, want 303 (or 429)", name, code)
		}
		s, err := strconv.Atoi(retry)
		if err != nil || s < 1 {
			return 0, fmt.Errorf("429 with Retry-After %q, want whole seconds", retry)
		}
		time.Sleep(time.Duration(s) * time.Second)
	}
	return 0, fmt.Errorf("sign in as %s: not in after %s", name, limit)
}

// floodResult is what a flood did.
type floodResult struct {
	attempts, refused, wrong, other int64
	// refusedNoRetry counts 429s without a whole-seconds Retry-After.
	refusedNoRetry int64
	// rssGrowth is the peak resident memory during the flood less the
	// resident memory before it; heapGrowth the same for the Go heap.
	rssGrowth, heapGrowth uint64
	// grace (from the browser she signed in with before) and bob (a
	// fresh browser) sign in during the flood: how long each took.
	grace, bob time.Duration
	// elapsed is how long the flood lasted.
	elapsed time.Duration
}

// flood sends wrong passwords from attackers addresses: concurrent
// senders at once, each sending rounds attempts back to back, half on
// grace's name and half on names nobody has. Once every sender has had
// its first answer, grace (from the browser she signed in with before
// the flood) and bob (from a fresh browser) sign in with the right
// password; the flood goes on until both are in and every sender is done.
func flood(tb testing.TB, f *floodSite, attackers, concurrent, rounds int) floodResult {
	tb.Helper()
	graceBrowser := f.browser(tb, "127.0.0.200")
	if _, err := f.signInUntilIn(graceBrowser, "grace", gracePassword, time.Minute); err != nil {
		tb.Fatal(err)
	}
	bobBrowser := f.browser(tb, "127.0.0.201")
	var bots []*browser
	for i := range attackers {
		bots = append(bots, f.browser(tb, fmt.Sprint("127.0.0.", 10+i)))
	}

	var r floodResult
	mem := watchMemory(tb)
	start := time.Now()
	var started sync.WaitGroup
	var wg sync.WaitGroup
	for i := range concurrent {
		started.Add(1)
		wg.Go(func() {
			for n := range rounds {
				name := "grace"
				if i%2 == 1 {
					name = fmt.Sprintf("nobody-%d-%d", i, n)
				}
				code, retry, err := f.signIn(bots[i%attackers], name, "a wrong guess")
				atomic.AddInt64(&r.attempts, 1)
				switch {
				case err != nil:
					atomic.AddInt64(&r.other, 1)
				case code == http.StatusTooManyRequests:
					atomic.AddInt64(&r.refused, 1)
					if s, err := strconv.Atoi(retry); err != nil || s < 1 {
						atomic.AddInt64(&r.refusedNoRetry, 1)
					}
				case code == http.StatusUnauthorized:
					atomic.AddInt64(&r.wrong, 1)
				default:
					atomic.AddInt64(&r.other, 1)
				}
				if n == 0 {
					started.Done()
				}
			}
		})
	}
	started.Wait()
	// The flood runs: every attacker has had an answer and sends again.
	var in sync.WaitGroup
	var errs [2]error
	in.Go(func() { r.grace, errs[0] = f.signInUntilIn(graceBrowser, "grace", gracePassword, time.Minute) })
	in.Go(func() { r.bob, errs[1] = f.signInUntilIn(bobBrowser, "bob", bobPassword, time.Minute) })
	in.Wait()
	wg.Wait()
	r.elapsed = time.Since(start)
	r.rssGrowth, r.heapGrowth = mem()
	for _, err := range errs {
		if err != nil {
			tb.Error(err)
		}
	}
	return r
}

// watchMemory samples the process's resident memory and Go heap until
// the returned function is called, which returns the peaks' growth over
// the values before. Resident memory is also read as the kernel's own
// peak (VmHWM), reset first where the kernel allows it.
func watchMemory(tb testing.TB) func() (rss, heap uint64) {
	tb.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseRSS, baseHeap := procStatus(tb, "VmRSS"), ms.HeapInuse
	hwm := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	var peakRSS, peakHeap atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peakHeap.Store(max(peakHeap.Load(), ms.HeapInuse))
			peakRSS.Store(max(peakRSS.Load(), procStatus(tb, "VmRSS")))
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() (uint64, uint64) {
		close(done)
		wg.Wait()
		rss := peakRSS.Load()
		if hwm {
			rss = max(rss, procStatus(tb, "VmHWM"))
		}
		return sub(rss, baseRSS), sub(peakHeap.Load(), baseHeap)
	}
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// procStatus reads a "kB" field of /proc/self/status, in bytes.
func procStatus(tb testing.TB, field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		tb.Skipf("no /proc/self/status: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				tb.Fatalf("%s: %q", field, v)
			}
			return kb << 10
		}
	}
	tb.Fatalf("/proc/self/status has no %s", field)
	return 0
}

// hashBytes is what one argon2id hash holds (class.argonMemory).
const hashBytes = 64 << 20

// floodBounds are the growth of the Go heap and of resident memory a
// flood may cause. The heap holds the hashes the gate lets run at once
// (one per two cores, at most 4) and 64 MiB for the 500 requests
// themselves (connections, buffers and goroutines, on both ends here),
// twice over, since Go's collector lets the heap grow to twice what is
// live before it collects (GOGC=100). Resident memory adds 128 MiB for
// what the runtime holds beside the heap (goroutine stacks, freed memory
// not yet returned). On two cores: 256 and 384 MiB.
func floodBounds() (heap, rss uint64) {
	slots := min(max(runtime.GOMAXPROCS(0)/2, 1), 4)
	heap = 2 * (uint64(slots)*hashBytes + 64<<20)
	return heap, heap + 128<<20
}

// TestSignInFlood: 500 wrong sign-ins in flight at once from 5 addresses,
// four rounds each, half on a real instructor's name: the server's memory
// stays under floodBounds (a heap growth of 256 MiB, resident 384 MiB, on
// two cores; before the limits, 120 at once grew it by 7.7 GiB), most attempts are refused with 429 and
// a Retry-After in whole seconds, and the right password gets in during
// the flood, both from a fresh browser on another address (bob, whose
// name is not attacked) and from grace's own browser (whose name is).
func TestSignInFlood(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("binds client sockets to 127.0.0.x and reads /proc: Linux only")
	}
	f := newFloodSite(t)
	r := flood(t, f, 5, 500, 4)
	t.Logf("%d attempts in %s: %d refused (429), %d wrong (401, hashed), %d other; memory growth %d MiB resident, %d MiB heap; grace in after %s, bob after %s",
		r.attempts, r.elapsed.Round(time.Millisecond), r.refused, r.wrong, r.other, r.rssGrowth>>20, r.heapGrowth>>20,
		r.grace.Round(time.Millisecond), r.bob.Round(time.Millisecond))
	if heap, rss := floodBounds(); r.heapGrowth > heap || r.rssGrowth > rss {
		t.Errorf("memory growth during the flood: heap %d MiB, resident %d MiB; want at most %d and %d MiB",
			r.heapGrowth>>20, r.rssGrowth>>20, heap>>20, rss>>20)
	}
	if r.attempts < 500 || r.other != 0 || r.refusedNoRetry != 0 {
		t.Errorf("attempts: got %d (%d neither 429 nor 401, %d 429s without a Retry-After), want at least 500, all 429 or 401, each 429 with one",
			r.attempts, r.other, r.refusedNoRetry)
	}
	// Each address may have 10 wrong passwords hashed at once, and one
	// more per 6 s: nearly every attempt is refused without a hash.
	if maxHashed := 5 * (10 + int64(r.elapsed/(6*time.Second)) + 1); r.wrong > maxHashed || r.refused < r.attempts-maxHashed {
		t.Errorf("hashed %d, refused %d of %d: want at most %d hashed, the rest refused", r.wrong, r.refused, r.attempts, maxHashed)
	}
}

// BenchmarkSignInFlood reports, per flood of 500 wrong sign-ins in flight
// from 5 addresses (four rounds each): the peak growth of resident memory and heap, how long
// the right password took to get in (grace from her own browser, on the
// attacked name; bob from a fresh one), and the share of attempts refused
// without hashing.
func BenchmarkSignInFlood(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("binds client sockets to 127.0.0.x and reads /proc: Linux only")
	}
	var rss, heap uint64
	var grace, bob time.Duration
	var refused float64
	n := 0
	for b.Loop() {
		b.StopTimer()
		f := newFloodSite(b)
		b.StartTimer()
		r := flood(b, f, 5, 500, 4)
		rss, heap = max(rss, r.rssGrowth), max(heap, r.heapGrowth)
		grace, bob = max(grace, r.grace), max(bob, r.bob)
		refused += float64(r.refused) / float64(r.attempts)
		n++
	}
	b.ReportMetric(float64(rss)/(1<<20), "peak-rss-growth-MiB")
	b.ReportMetric(float64(heap)/(1<<20), "peak-heap-growth-MiB")
	b.ReportMetric(grace.Seconds(), "own-browser-signin-s")
	b.ReportMetric(bob.Seconds(), "fresh-browser-signin-s")
	b.ReportMetric(refused/float64(n), "refused-ratio")
}
