package webapp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/pgtest"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/web"
)

func TestMain(m *testing.M) { os.Exit(clustertest.Main(m, pgtest.Stop)) }

// site is oplab's lab server as `oplab serve` composes it, on a real
// embedded cluster provider, a real store and the built-in course,
// listening on 127.0.0.1.
type site struct {
	app  *app.App
	srv  *server.Server
	url  string
	bin  string
	data string
	// close stops the server and every session; the test's end calls it
	// when the test did not.
	close func()
	// die stops the server and its application as a killed replica stops:
	// the sessions and their clusters stay, for another server to serve.
	die func()
}

// newSite starts a site; the test's end stops every session it started
// (and so their clusters), then the server.
func newSite(t testing.TB) *site { return newSiteWith(t, ServerConfig{}) }

// newSiteWith starts a site whose server has c's warm pool and expiry.
func newSiteWith(t testing.TB, c ServerConfig) *site { return newSiteOf(t, app.Config{}, c) }

// newSiteOf starts a site whose application has ac's settings (its
// admission) and whose server has c's.
func newSiteOf(t testing.TB, ac app.Config, c ServerConfig) *site {
	t.Helper()
	return startSite(t, ac, c, t.TempDir(), "")
}

// startSite starts a site on the data directory data, which other sites
// may share as replicas of one oplab do; front, when set, is the address
// of a proxy before it, which it answers to as well.
func startSite(t testing.TB, ac app.Config, c ServerConfig, data, front string) *site {
	t.Helper()
	ctx := context.Background()
	s := &site{bin: clustertest.BinDir(t), data: data}
	ac.DataDir, ac.BinDir = s.data, s.bin
	a, err := app.Open(ctx, ac)
	if err != nil {
		t.Fatal(err)
	}
	s.app = a
	ts := httptest.NewUnstartedServer(nil)
	var extra []string
	if front != "" {
		extra = server.Hosts(front)
	}
	c.BinDir, c.DataDir, c.Web, c.Hosts = s.bin, s.data, web.FS, server.Hosts(ts.Listener.Addr().String(), extra...)
	srv, closeServer, err := NewServer(ctx, a, c)
	if err != nil {
		a.Close()
		t.Fatal(err)
	}
	s.srv, s.url = srv, "http://"+ts.Listener.Addr().String()
	ts.Config.Handler = srv
	ts.Start()
	var once sync.Once
	stop := func(sessions bool) {
		ts.Close()
		if err := closeServer(); err != nil { // and its warm pool's keeper
			t.Errorf("close the server: %v", err)
		}
		if sessions {
			s.stopSessions(t, "")
		}
		a.Close()
	}
	s.close = func() { once.Do(func() { stop(true) }) }
	s.die = func() { once.Do(func() { stop(false) }) }
	t.Cleanup(s.close)
	return s
}

// stopSessions stops every session of learner (of every learner, the warm
// pool's too, when ""), which deletes their clusters; a completed session
// keeps its cluster until then.
func (s *site) stopSessions(t testing.TB, learner string) {
	t.Helper()
	list, err := s.app.SessionList(context.Background(), learner)
	if err != nil {
		t.Errorf("list sessions: %v", err)
		return
	}
	for _, ss := range list {
		// Each stop has its own time: a class's thirty take minutes in all.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		if _, err := s.app.Stop(ctx, ss.ID, "the test ended", nil); err != nil {
			t.Errorf("stop session %s: %v", ss.ID, err)
		}
		cancel()
	}
}

// signIn is the one-time sign-in link `oplab serve` prints.
func (s *site) signIn() string { return s.srv.SignInURL(s.url) }

// get fetches path without a session cookie (for /metrics).
func (s *site) get(t testing.TB, path string) string {
	t.Helper()
	resp, err := http.Get(s.url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}
