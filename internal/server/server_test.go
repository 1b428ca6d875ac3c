package server

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"oplab.dev/oplab/internal/metrics"
	"strings"
	"testing"

	"oplab.dev/oplab/web"
)

// testServer is a server over the fakes on a real listener, and a client
// signed in to it.
type testServer struct {
	*httptest.Server
	s       *Server
	app     *fakeApp
	client  *http.Client // signed in
	csrf    string
	data    string
	metrics *metrics.Metrics
}

func newTestServer(t *testing.T) *testServer {
	t.Helper()
	return newTestServerIn(t, t.TempDir())
}

func newTestServerIn(t *testing.T, data string) *testServer {
	t.Helper()
	return newTestServerWith(t, data, nil)
}

// newTestServerWith is newTestServerIn with edit, when not nil, changing
// the server's Config first.
func newTestServerWith(t *testing.T, data string, edit func(*Config)) *testServer {
	t.Helper()
	app := newFakeApp()
	ts := httptest.NewUnstartedServer(nil)
	m := metrics.New(metrics.Options{})
	cfg := app.config(Config{Console: fakeConsole{}, Web: web.FS, DataDir: data,
		Hosts: Hosts(ts.Listener.Addr().String()), Learner: "local", MaxBody: 4096, Metrics: m})
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s
	ts.Start()
	t.Cleanup(func() { ts.Close(); s.Close() })
	out := &testServer{Server: ts, s: s, app: app, data: data, metrics: m}
	out.client, out.csrf = out.signIn(t)
	return out
}

// signIn follows a fresh sign-in link and returns the client holding the
// cookie, and the page's CSRF token.
func (ts *testServer) signIn(t *testing.T) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(ts.s.SignInURL(ts.URL))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sign in: got %d, want 200 after the redirect", resp.StatusCode)
	}
	_, rest, ok := strings.Cut(string(body), `name="csrf-token" content="`)
	if !ok {
		t.Fatalf("signed-in page has no CSRF token:\n%s", body)
	}
	tok, _, _ := strings.Cut(rest, `"`)
	return c, tok
}

// do sends a request with the given client, headers and body.
func do(t *testing.T, c *http.Client, method, url, body string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestSignedOutSeesOnlyTheSignInPage(t *testing.T) {
	ts := newTestServer(t)
	for _, path := range []string{"/", "/labs/failover", "/sessions/alice-1/summary"} {
		code, body, _ := do(t, http.DefaultClient, "GET", ts.URL+path, "", nil)
		if code != http.StatusUnauthorized || !strings.Contains(body, `id="signin"`) {
			t.Errorf("GET %s signed out: got %d, want 401 with the sign-in page", path, code)
		}
		for _, leak := range []string{"Failover", "alice-1", "lesson"} {
			if path != "/sessions/alice-1/summary" && strings.Contains(body, leak) {
				t.Errorf("GET %s signed out: page shows %q", path, leak)
			}
		}
	}
	if code, _, _ := do(t, http.DefaultClient, "GET", ts.URL+"/api/labs", "", nil); code != http.StatusUnauthorized {
		t.Errorf("GET /api/labs signed out: got %d, want 401", code)
	}
	if code, _, _ := do(t, http.DefaultClient, "GET", ts.URL+"/static/oplab.css", "", nil); code != http.StatusOK {
		t.Errorf("GET /static/oplab.css signed out: got %d, want 200", code)
	}
}

func TestSignInTokenWorksOnce(t *testing.T) {
	ts := newTestServer(t)
	link := ts.s.SignInURL(ts.URL)
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("first use: got %d, want 303", resp.StatusCode)
	}
	var ck *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie {
			ck = c
		}
	}
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" {
		t.Fatalf("session cookie: got %+v, want HttpOnly SameSite=Strict on /", ck)
	}
	for _, bad := range []string{link, ts.URL + "/login?token=guess", ts.URL + "/login"} {
		code, body, _ := do(t, noFollow, "GET", bad, "", nil)
		if code != http.StatusUnauthorized || !strings.Contains(body, `id="signin"`) {
			t.Errorf("GET %s: got %d, want 401 and the sign-in page", bad, code)
		}
	}
	// A cookie whose payload was changed, or signed with another key, is refused.
	payload, mac, _ := strings.Cut(ck.Value, ".")
	forged := []string{payload + "x." + mac, strings.Replace(ck.Value, mac, strings.Repeat("A", len(mac)), 1), "junk"}
	other, _ := (signer{key: []byte(strings.Repeat("k", 32))}).encode(sessionCookie, identity{Learner: "local", CSRF: "x", Expires: 1 << 40})
	for _, v := range append(forged, other) {
		code, _, _ := do(t, noFollow, "GET", ts.URL+"/api/labs", "", map[string]string{"Cookie": sessionCookie + "=" + v})
		if code != http.StatusUnauthorized {
			t.Errorf("forged cookie %q: got %d, want 401", v, code)
		}
	}
	code, _, _ := do(t, noFollow, "GET", ts.URL+"/api/labs", "", map[string]string{"Cookie": sessionCookie + "=" + ck.Value})
	if code != http.StatusOK {
		t.Errorf("the real cookie: got %d, want 200", code)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
