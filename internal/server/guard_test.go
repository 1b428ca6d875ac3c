package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oplab.dev/oplab/web"
)

func TestHostCheck(t *testing.T) {
	ts := newTestServer(t)
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	for _, tc := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"LOCALHOST:" + port, http.StatusOK},
		{"evil.example:" + port, http.StatusMisdirectedRequest},
		{"127.0.0.1", http.StatusMisdirectedRequest},
		{"127.0.0.1:1", http.StatusMisdirectedRequest},
		{"rebind.attacker.test", http.StatusMisdirectedRequest},
	} {
		// healthz needs no cookie: only the Host decides.
		code, _, _ := do(t, http.DefaultClient, "GET", ts.URL+"/healthz", "", map[string]string{"Host": tc.host})
		if code != tc.want {
			t.Errorf("Host %q: got %d, want %d", tc.host, code, tc.want)
		}
	}
}

func TestHosts(t *testing.T) {
	for _, tc := range []struct {
		addr  string
		extra []string
		want  string
	}{
		{"127.0.0.1:8080", nil, "127.0.0.1:8080 localhost:8080 127.0.0.1:8080 [::1]:8080"},
		{"0.0.0.0:80", []string{"lab.school.kr"}, "0.0.0.0:80 localhost:80 127.0.0.1:80 [::1]:80 lab.school.kr:80"},
		{"10.0.0.5:8080", []string{"10.0.0.5:8080"}, "10.0.0.5:8080 10.0.0.5:8080"},
	} {
		if got := strings.Join(Hosts(tc.addr, tc.extra...), " "); got != tc.want {
			t.Errorf("Hosts(%q, %q): got %q, want %q", tc.addr, tc.extra, got, tc.want)
		}
	}
}

func TestCSRF(t *testing.T) {
	ts := newTestServer(t)
	url := ts.URL + "/api/sessions/alice-1/check"
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", nil, http.StatusForbidden},
		{"wrong token", map[string]string{csrfHeader: "nope"}, http.StatusForbidden},
		{"another origin", map[string]string{csrfHeader: ts.csrf, "Origin": "http://evil.example"}, http.StatusForbidden},
		{"opaque origin", map[string]string{csrfHeader: ts.csrf, "Origin": "null"}, http.StatusForbidden},
		{"token", map[string]string{csrfHeader: ts.csrf}, http.StatusOK},
		{"token and own origin", map[string]string{csrfHeader: ts.csrf, "Origin": ts.URL}, http.StatusOK},
	} {
		code, body, _ := do(t, ts.client, "POST", url, "{}", tc.hdr)
		if code != tc.want {
			t.Errorf("%s: got %d %s, want %d", tc.name, code, body, tc.want)
		}
	}
	if n := strings.Count(strings.Join(ts.app.learning.calls(), "\n"), "check alice-1"); n != 2 {
		t.Errorf("checks run: got %d, want 2 (only the requests with the token)", n)
	}
	// A form without the token cannot switch the language, or sign out.
	for _, path := range []string{"/lang", "/logout"} {
		code, _, _ := do(t, ts.client, "POST", ts.URL+path, "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
		if code != http.StatusForbidden {
			t.Errorf("POST %s without token: got %d, want 403", path, code)
		}
	}
}

func TestBodyLimit(t *testing.T) {
	ts := newTestServer(t) // MaxBody 4096
	hdr := map[string]string{csrfHeader: ts.csrf}
	big := fmt.Sprintf(`{"answers":{"q1":[%q]}}`, strings.Repeat("a", 5000))
	code, _, _ := do(t, ts.client, "POST", ts.URL+"/api/sessions/alice-1/quiz", big, hdr)
	if code != http.StatusRequestEntityTooLarge {
		t.Errorf("5 kB body: got %d, want 413", code)
	}
	code, body, _ := do(t, ts.client, "POST", ts.URL+"/api/sessions/alice-1/quiz", `{"answers":{"q1":["a"]}}`, hdr)
	if code != http.StatusOK {
		t.Errorf("small body: got %d %s, want 200", code, body)
	}
	code, _, _ = do(t, ts.client, "POST", ts.URL+"/api/sessions/alice-1/quiz", `{"answers":`, hdr)
	if code != http.StatusBadRequest {
		t.Errorf("broken JSON: got %d, want 400", code)
	}
}

func TestSecurityHeaders(t *testing.T) {
	ts := newTestServer(t)
	_, _, h := do(t, ts.client, "GET", ts.URL+"/labs/failover", "", nil)
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "object-src 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("CSP %q allows inline script or eval", csp)
	}
	if got := h.Get("Referrer-Policy"); got != "same-origin" {
		t.Errorf("Referrer-Policy: got %q, want same-origin", got)
	}
}

func TestCookieKeyPersistsAndIsPrivate(t *testing.T) {
	data := t.TempDir()
	a := newTestServerIn(t, data)
	st, err := os.Stat(filepath.Join(data, keyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: got %v %v, want mode 0600", st, err)
	}
	// b is a restarted a: the same data dir, the same application (and
	// so the same record of sign-ins).
	b := newTestServerWith(t, data, func(c *Config) { *c = a.app.config(*c) })
	// a's cookie, sent to b.
	u, _ := a.client.Jar.Cookies(mustURL(t, a.URL))[0], 0
	code, _, _ := do(t, http.DefaultClient, "GET", b.URL+"/api/labs", "", map[string]string{"Cookie": sessionCookie + "=" + u.Value})
	if code != http.StatusOK {
		t.Errorf("cookie after restart: got %d, want 200", code)
	}
	if err := os.Chmod(filepath.Join(data, keyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadKey(data); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("world-readable key: got %v, want a refusal", err)
	}
}

// TestGivenKeySharedByReplicas: replicas given one key (Config.Key), each
// with a data directory of its own, accept each other's cookies; without
// it each makes a key of its own and refuses the other's; a short key is
// refused at start.
func TestGivenKeySharedByReplicas(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	withKey := func(k []byte) func(*Config) { return func(c *Config) { c.Key = k } }
	a := newTestServerWith(t, t.TempDir(), withKey(key))
	b := newTestServerWith(t, t.TempDir(), func(c *Config) { *c = a.app.config(*c); c.Key = key })
	own := newTestServerWith(t, t.TempDir(), func(c *Config) { *c = a.app.config(*c) })
	cookie := a.client.Jar.Cookies(mustURL(t, a.URL))[0]
	hdr := map[string]string{"Cookie": sessionCookie + "=" + cookie.Value}
	if code, _, _ := do(t, http.DefaultClient, "GET", b.URL+"/api/labs", "", hdr); code != http.StatusOK {
		t.Errorf("a's cookie on b, which has the same key: got %d, want 200", code)
	}
	if code, _, _ := do(t, http.DefaultClient, "GET", own.URL+"/api/labs", "", hdr); code != http.StatusUnauthorized {
		t.Errorf("a's cookie on a server with a key of its own: got %d, want 401", code)
	}
	if _, err := os.Stat(filepath.Join(b.data, keyFile)); !os.IsNotExist(err) {
		t.Errorf("a server given its key wrote one to its data directory (%v)", err)
	}
	_, err := New(newFakeApp().config(Config{Web: web.FS, DataDir: t.TempDir(), Hosts: Hosts("127.0.0.1:1"), Learner: "local", Key: []byte("short")}))
	if err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("a short key: got %v, want a refusal", err)
	}
}

func TestMetricsServedWhenGiven(t *testing.T) {
	ts := newTestServer(t)                                         // with metrics
	do(t, ts.client, "GET", ts.URL+"/api/sessions/bob-1", "", nil) // another learner's: a refusal
	code, body, _ := do(t, http.DefaultClient, "GET", ts.URL+"/metrics", "", nil)
	if code != http.StatusOK || !strings.Contains(body, `oplab_refusals_total{reason="forbidden"} 1`) {
		t.Errorf("GET /metrics: got %d, want 200 with oplab's metrics:\n%.300s", code, body)
	}
	bare := httptest.NewUnstartedServer(nil)
	s, err := New(newFakeApp().config(Config{Web: web.FS, DataDir: t.TempDir(), Hosts: Hosts(bare.Listener.Addr().String()), Learner: "local"}))
	if err != nil {
		t.Fatal(err)
	}
	bare.Config.Handler = s
	bare.Start()
	defer func() { bare.Close(); s.Close() }()
	if code, _, _ := do(t, http.DefaultClient, "GET", bare.URL+"/metrics", "", nil); code != http.StatusNotFound {
		t.Errorf("GET /metrics without metrics: got %d, want 404", code)
	}
}

func TestReadyz(t *testing.T) {
	var ready error
	ts := httptest.NewUnstartedServer(nil)
	s, err := New(newFakeApp().config(Config{Web: web.FS, DataDir: t.TempDir(), Hosts: Hosts(ts.Listener.Addr().String()),
		Learner: "local", Operations: readyFunc(func(context.Context) error { return ready })}))
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s
	ts.Start()
	defer func() { ts.Close(); s.Close() }()
	for _, tc := range []struct {
		ready    error
		code     int
		contains string
	}{
		{nil, http.StatusOK, "ok"},
		{errors.New("store oplab.db: database is locked"), http.StatusServiceUnavailable, "not ready: store oplab.db: database is locked"},
	} {
		ready = tc.ready
		code, body, _ := do(t, http.DefaultClient, "GET", ts.URL+"/readyz", "", nil)
		if code != tc.code || !strings.Contains(body, tc.contains) {
			t.Errorf("GET /readyz with %v: got %d %q, want %d %q", tc.ready, code, body, tc.code, tc.contains)
		}
	}
}
