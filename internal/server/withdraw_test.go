package server

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// sessionOf returns the session cookie c holds for ts.
func sessionOf(t *testing.T, ts *testServer, c *http.Client) string {
	t.Helper()
	for _, ck := range c.Jar.Cookies(mustURL(t, ts.URL)) {
		if ck.Name == sessionCookie {
			return ck.Value
		}
	}
	t.Fatal("no session cookie")
	return ""
}

// replay sends a captured session cookie alone, as a thief holding a copy
// would, and returns the status.
func replay(t *testing.T, ts *testServer, cookie, path string) int {
	t.Helper()
	code, _, _ := do(t, http.DefaultClient, "GET", ts.URL+path, "", map[string]string{"Cookie": sessionCookie + "=" + cookie})
	return code
}

// TestWithdrawnCookiesAreRefused: a cookie captured before a sign-out, a
// class's closing or an instructor's removal is refused on the next
// request with the status of a signed-out caller (401, the sign-in page
// for a page); cookies the change is not about keep working.
func TestWithdrawnCookiesAreRefused(t *testing.T) {
	for _, tt := range []struct {
		name string
		// setUp signs the victim in and returns their client and the
		// path they can reach; withdraw is the change.
		setUp    func(t *testing.T, ts *testServer) (*http.Client, string, string)
		withdraw func(t *testing.T, ts *testServer, victim *http.Client, csrf string)
	}{
		{"learner signs out",
			func(t *testing.T, ts *testServer) (*http.Client, string, string) {
				c, csrf := ts.signIn(t)
				return c, csrf, "/api/labs"
			},
			func(t *testing.T, ts *testServer, victim *http.Client, csrf string) {
				code, _, h := do(t, newJarFrom(t, ts, victim), "POST", ts.URL+"/logout", url.Values{csrfField: {csrf}}.Encode(), form)
				if code != http.StatusSeeOther || !strings.Contains(h.Get("Set-Cookie"), sessionCookie+"=;") {
					t.Errorf("sign-out: got %d, Set-Cookie %q; want 303 clearing the cookie", code, h.Get("Set-Cookie"))
				}
			}},
		{"instructor signs out",
			func(t *testing.T, ts *testServer) (*http.Client, string, string) {
				c, csrf := ts.instructorSignIn(t, "ada", "ada-password")
				return c, csrf, "/api/classes/morning/board"
			},
			func(t *testing.T, ts *testServer, victim *http.Client, csrf string) {
				do(t, newJarFrom(t, ts, victim), "POST", ts.URL+"/logout", url.Values{csrfField: {csrf}}.Encode(), form)
			}},
		{"the learner's class is closed",
			func(t *testing.T, ts *testServer) (*http.Client, string, string) {
				c, csrf, _ := joinAs(t, ts, "MORNING", "Alice")
				return c, csrf, "/api/labs"
			},
			func(t *testing.T, ts *testServer, _ *http.Client, _ string) {
				ada, csrf := ts.instructorSignIn(t, "ada", "ada-password")
				if code, body, _ := do(t, ada, "POST", ts.URL+"/api/classes/morning/close", "{}", map[string]string{csrfHeader: csrf}); code != http.StatusOK {
					t.Fatalf("ada closes morning: got %d %s", code, body)
				}
			}},
		{"the instructor is removed",
			func(t *testing.T, ts *testServer) (*http.Client, string, string) {
				c, csrf := ts.instructorSignIn(t, "ada", "ada-password")
				return c, csrf, "/api/classes/morning/board"
			},
			func(t *testing.T, ts *testServer, _ *http.Client, _ string) { ts.app.signIns.removeInstructor("ada") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			bystander, _ := ts.instructorSignIn(t, "bob", "bob-password")
			victim, csrf, path := tt.setUp(t, ts)
			captured := sessionOf(t, ts, victim)
			if code := replay(t, ts, captured, path); code != http.StatusOK {
				t.Fatalf("GET %s before: got %d, want 200", path, code)
			}
			tt.withdraw(t, ts, victim, csrf)
			if code := replay(t, ts, captured, path); code != http.StatusUnauthorized {
				t.Errorf("GET %s with the cookie captured before: got %d, want 401", path, code)
			}
			code, body, h := do(t, http.DefaultClient, "GET", ts.URL+"/", "", map[string]string{"Cookie": sessionCookie + "=" + captured})
			if code != http.StatusUnauthorized || !strings.Contains(body, `id="signin"`) {
				t.Errorf("GET / with the cookie captured before: got %d, want 401 and the sign-in page", code)
			}
			if !strings.Contains(h.Get("Set-Cookie"), sessionCookie+"=;") {
				t.Errorf("refused cookie: Set-Cookie %q, want it cleared", h.Get("Set-Cookie"))
			}
			if code, _, _ := do(t, bystander, "GET", ts.URL+"/api/classes/evening/board", "", nil); code != http.StatusOK {
				t.Errorf("another instructor after the change: got %d, want 200", code)
			}
		})
	}
}

// newJarFrom is a client without redirects holding c's cookies for ts.
func newJarFrom(t *testing.T, ts *testServer, c *http.Client) *http.Client {
	t.Helper()
	out := newJar()
	out.Jar.SetCookies(mustURL(t, ts.URL), c.Jar.Cookies(mustURL(t, ts.URL)))
	return out
}

// TestAdminIsReadFromTheRecord: whether an instructor is an admin is what
// the application says on each request: a demoted admin loses others'
// classes at once, and a cookie re-signed to say "admin" (with the
// server's own key) makes nobody one.
func TestAdminIsReadFromTheRecord(t *testing.T) {
	ts := newTestServer(t)
	root, _ := ts.instructorSignIn(t, "root", "root-password")
	ada, _ := ts.instructorSignIn(t, "ada", "ada-password")
	board := func(c *http.Client, cookie string) int {
		h := map[string]string{}
		if cookie != "" {
			c, h = http.DefaultClient, map[string]string{"Cookie": sessionCookie + "=" + cookie}
		}
		code, _, _ := do(t, c, "GET", ts.URL+"/api/classes/evening/board", "", h)
		return code
	}
	if code := board(root, ""); code != http.StatusOK {
		t.Fatalf("root (admin) on bob's class: got %d, want 200", code)
	}
	ts.app.signIns.setAdmin("root", false)
	if code := board(root, ""); code != http.StatusForbidden {
		t.Errorf("root demoted, same cookie: got %d, want 403", code)
	}
	ts.app.signIns.setAdmin("ada", true)
	if code := board(ada, ""); code != http.StatusOK {
		t.Errorf("ada promoted, same cookie: got %d, want 200", code)
	}
	ts.app.signIns.setAdmin("ada", false)

	// ada's cookie with "a": true (where old cookies kept the flag),
	// signed with the server's key.
	key, err := loadKey(ts.data)
	if err != nil {
		t.Fatal(err)
	}
	payload, _, _ := strings.Cut(sessionOf(t, ts, ada), ".")
	raw, _ := base64.RawURLEncoding.DecodeString(payload)
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	fields["a"] = true
	forged, _ := signer{key: key}.encodeValue(sessionCookie, fields)
	if code := board(nil, forged); code != http.StatusForbidden {
		t.Errorf("ada's cookie re-signed saying admin: got %d, want 403", code)
	}
	// A cookie without a sign-in (as this server made before sign-ins
	// were recorded), or naming someone else's, admits nobody.
	legacy, _ := signer{key: key}.encode(sessionCookie, identity{Learner: "instructor:root", Role: roleInstructor, Instructor: "root",
		CSRF: "x", Expires: time.Now().Add(time.Hour).Unix()})
	fields["i"], fields["l"] = "root", "instructor:root"
	swapped, _ := signer{key: key}.encodeValue(sessionCookie, fields)
	for name, v := range map[string]string{"legacy": legacy, "another's sign-in": swapped} {
		if code := board(nil, v); code != http.StatusUnauthorized {
			t.Errorf("%s cookie: got %d, want 401", name, code)
		}
	}
}

// TestDeviceCookie: a browser where an instructor signed in is told apart
// from others on their next sign-in there (the application decides what
// that is worth); a device cookie not signed by the server, or sent to
// another page, counts for nothing.
func TestDeviceCookie(t *testing.T) {
	ts := newTestServer(t)
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	signIn := func(c *http.Client) {
		t.Helper()
		_, page, _ := do(t, c, "GET", ts.URL+"/instructor/login", "", nil)
		v := url.Values{"name": {"ada"}, "password": {"ada-password"}, "_csrf": {pageToken(t, page)}}
		do(t, c, "POST", ts.URL+"/instructor/login", v.Encode(), form)
	}
	signIn(browser)
	var dev *http.Cookie
	for _, ck := range jar.Cookies(mustURL(t, ts.URL+devicePath)) {
		if ck.Name == deviceCookie {
			dev = ck
		}
	}
	if dev == nil {
		t.Fatal("no device cookie after a sign-in")
	}
	if slices.ContainsFunc(jar.Cookies(mustURL(t, ts.URL+"/api/labs")), func(c *http.Cookie) bool { return c.Name == deviceCookie }) {
		t.Error("the device cookie is sent beyond the sign-in form")
	}
	signIn(browser)
	other, _ := cookiejar.New(nil)
	signIn(&http.Client{Jar: other})
	bad, _ := signer{key: []byte(strings.Repeat("k", 32))}.encodeValue(deviceCookie, device{Instructor: "ada", Expires: time.Now().Add(time.Hour).Unix()})
	forged, _ := cookiejar.New(nil)
	forged.SetCookies(mustURL(t, ts.URL+devicePath), []*http.Cookie{{Name: deviceCookie, Value: bad, Path: devicePath}})
	signIn(&http.Client{Jar: forged})
	if got, want := ts.app.signIns.devicesSent(), []string{"", "ada", "", ""}; !slices.Equal(got, want) {
		t.Errorf("devices sent with each sign-in: got %q, want %q (first, same browser, another, forged)", got, want)
	}
}

// TestLastingRequestsEndWithTheirSignIn: a live stream opened before a
// sign-out stays open while the sign-in holds, and ends within a recheck
// once it is withdrawn.
func TestLastingRequestsEndWithTheirSignIn(t *testing.T) {
	ts := newTestServerWith(t, t.TempDir(), func(c *Config) { c.SignInRecheck = 20 * time.Millisecond })
	conn, code := dialWSAs(t, ts, ts.client, "/api/events", ts.URL)
	if code != http.StatusSwitchingProtocols {
		t.Fatalf("open the events stream: got %d, want 101", code)
	}
	read := make(chan error, 1)
	go func() {
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				read <- err
				return
			}
		}
	}()
	select {
	case err := <-read:
		t.Fatalf("the stream ended while signed in: %v", err)
	case <-time.After(10 * ts.s.cfg.SignInRecheck):
	}
	if code, _, _ := do(t, newJarFrom(t, ts, ts.client), "POST", ts.URL+"/logout", url.Values{csrfField: {ts.csrf}}.Encode(), form); code != http.StatusSeeOther {
		t.Fatalf("sign out: got %d, want 303", code)
	}
	select {
	case err := <-read:
		if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Errorf("the stream after sign-out: got %v, want a close (going away)", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the stream is still open 10 s after sign-out")
	}
}
