package server

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/frame"
)

// instructorSignIn signs in with the instructor's form and returns the
// client with its cookie and the dashboard's CSRF token.
func (ts *testServer) instructorSignIn(t *testing.T, name, password string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	code, body, _ := do(t, c, "GET", ts.URL+"/instructor/login", "", nil)
	if code != http.StatusOK {
		t.Fatalf("instructor sign-in page: got %d", code)
	}
	form := url.Values{"name": {name}, "password": {password}, "_csrf": {pageToken(t, body)}}.Encode()
	code, body, _ = do(t, c, "POST", ts.URL+"/instructor/login", form, map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if code != http.StatusOK || !strings.Contains(body, `id="instructor-name">`+name+`<`) {
		t.Fatalf("instructor %s signs in: got %d, want the dashboard:\n%s", name, code, body)
	}
	_, rest, _ := strings.Cut(body, `name="csrf-token" content="`)
	tok, _, _ := strings.Cut(rest, `"`)
	return c, tok
}

func pageToken(t *testing.T, body string) string {
	t.Helper()
	_, rest, ok := strings.Cut(body, `name="_csrf" value="`)
	if !ok {
		t.Fatalf("no form token in:\n%s", body)
	}
	tok, _, _ := strings.Cut(rest, `"`)
	return tok
}

func TestInstructorSignIn(t *testing.T) {
	ts := newTestServer(t)
	var retry string
	form := func(c *http.Client, name, password string, withToken bool) (int, string) {
		_, page, _ := do(t, c, "GET", ts.URL+"/instructor/login", "", nil)
		v := url.Values{"name": {name}, "password": {password}}
		if withToken {
			v.Set("_csrf", pageToken(t, page))
		}
		code, body, h := do(t, c, "POST", ts.URL+"/instructor/login", v.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
		retry = h.Get("Retry-After")
		return code, body
	}
	jar, _ := cookiejar.New(nil)
	anon := &http.Client{Jar: jar}
	if code, body := form(anon, "ada", "wrong", true); code != http.StatusUnauthorized || !strings.Contains(body, "Wrong name or password") {
		t.Errorf("wrong password: got %d, want 401 saying so", code)
	}
	if code, _ := form(anon, "ada", "ada-password", false); code != http.StatusForbidden {
		t.Errorf("no form token: got %d, want 403", code)
	}
	for range fakeWrongCodes - 1 {
		form(anon, "ada", "wrong", true)
	}
	if code, body := form(anon, "ada", "ada-password", true); code != http.StatusTooManyRequests || !strings.Contains(body, "Too many sign-in attempts. Try again in 6.0s") || retry != "6" {
		t.Errorf("after %d wrong passwords: got %d with Retry-After %q, want 429 saying when to retry, and Retry-After 6", fakeWrongCodes, code, retry)
	}
	ts.app.signIns.forgetWrong()
	if code, _, _ := do(t, anon, "GET", ts.URL+"/instructor", "", nil); code != http.StatusUnauthorized {
		t.Errorf("dashboard before sign-in: got %d, want 401", code)
	}
	ada, _ := ts.instructorSignIn(t, "ada", "ada-password")
	_, body, _ := do(t, ada, "GET", ts.URL+"/instructor", "", nil)
	if !strings.Contains(body, `data-class="morning"`) || strings.Contains(body, `data-class="evening"`) {
		t.Errorf("ada's dashboard: want her class morning and not bob's evening:\n%s", body)
	}
	root, _ := ts.instructorSignIn(t, "root", "root-password")
	_, body, _ = do(t, root, "GET", ts.URL+"/instructor", "", nil)
	if !strings.Contains(body, `data-class="morning"`) || !strings.Contains(body, `data-class="evening"`) {
		t.Errorf("an admin's dashboard: want every class:\n%s", body)
	}
	// Signed in as an instructor, the learner's pages show no learner's
	// sessions: the instructor is nobody's learner.
	if code, _, _ := do(t, ada, "GET", ts.URL+"/api/sessions/bob-1", "", nil); code != http.StatusNotFound {
		t.Errorf("instructor on the learner's API for bob-1: got %d, want 404", code)
	}
}

// TestInstructorRoutesRefuseOthers: a learner reaches no instructor route;
// an instructor reaches only their classes, an admin every class; every
// action needs the CSRF token.
func TestInstructorRoutesRefuseOthers(t *testing.T) {
	ts := newTestServer(t)
	ada, adaTok := ts.instructorSignIn(t, "ada", "ada-password")
	bob, bobTok := ts.instructorSignIn(t, "bob", "bob-password")
	root, rootTok := ts.instructorSignIn(t, "root", "root-password")
	for _, tc := range []struct {
		who          string
		c            *http.Client
		tok          string
		method, path string
		want         int
	}{
		{"learner", ts.client, ts.csrf, "GET", "/instructor", http.StatusForbidden},
		{"learner", ts.client, ts.csrf, "GET", "/instructor/classes/morning", http.StatusForbidden},
		{"learner", ts.client, ts.csrf, "GET", "/instructor/classes/morning/sessions/bob-1", http.StatusForbidden},
		{"learner", ts.client, ts.csrf, "GET", "/api/classes/morning/board", http.StatusNotFound},
		{"learner", ts.client, ts.csrf, "GET", "/api/classes/morning/export.csv", http.StatusNotFound},
		{"learner", ts.client, ts.csrf, "POST", "/api/classes/morning/close", http.StatusNotFound},
		{"learner", ts.client, ts.csrf, "POST", "/api/classes/morning/sessions/bob-1/end", http.StatusNotFound},
		{"learner", ts.client, ts.csrf, "POST", "/api/classes/morning/sessions/bob-1/extend", http.StatusNotFound},
		{"learner", ts.client, ts.csrf, "GET", "/api/sessions/bob-1/streams/log?class=morning", http.StatusNotFound},
		{"ada", ada, adaTok, "GET", "/instructor/classes/morning", http.StatusOK},
		{"ada", ada, adaTok, "GET", "/api/classes/morning/board", http.StatusOK},
		{"ada", ada, adaTok, "GET", "/api/classes/morning/export.csv", http.StatusOK},
		{"ada", ada, adaTok, "GET", "/instructor/classes/morning/sessions/bob-1", http.StatusOK},
		{"ada", ada, adaTok, "GET", "/api/classes/morning/sessions/bob-1/timeline", http.StatusOK},
		{"ada", ada, adaTok, "GET", "/api/classes/morning/sessions/alice-1", http.StatusNotFound},
		{"ada", ada, adaTok, "GET", "/instructor/classes/evening", http.StatusForbidden},
		{"ada", ada, adaTok, "GET", "/api/classes/evening/board", http.StatusForbidden},
		{"ada", ada, adaTok, "GET", "/api/classes/evening/export.csv", http.StatusForbidden},
		{"ada", ada, adaTok, "POST", "/api/classes/evening/close", http.StatusForbidden},
		{"ada", ada, adaTok, "POST", "/api/classes/evening/sessions/bob-1/end", http.StatusForbidden},
		{"ada", ada, adaTok, "POST", "/api/classes/evening/sessions/bob-1/extend", http.StatusForbidden},
		// Streams are the learner's, read-only: reached through the class
		// (no Streams on this server: 409 once authorised).
		{"ada", ada, adaTok, "GET", "/api/sessions/bob-1/streams/log?class=morning", http.StatusConflict},
		{"ada", ada, adaTok, "GET", "/api/sessions/bob-1/streams/log", http.StatusNotFound},
		{"ada", ada, adaTok, "POST", "/api/sessions/bob-1/chaos", http.StatusNotFound},
		{"ada", ada, adaTok, "POST", "/api/sessions/bob-1/console", http.StatusNotFound},
		{"bob", bob, bobTok, "GET", "/api/classes/morning/board", http.StatusForbidden},
		{"bob", bob, bobTok, "POST", "/api/classes/morning/sessions/bob-1/reset", http.StatusForbidden},
		{"bob", bob, bobTok, "POST", "/api/classes/morning/sessions/bob-1/extend", http.StatusForbidden},
		{"bob", bob, bobTok, "GET", "/api/sessions/bob-1/streams/log?class=morning", http.StatusNotFound},
		{"bob", bob, bobTok, "GET", "/api/classes/evening/board", http.StatusOK},
		{"root", root, rootTok, "GET", "/api/classes/morning/board", http.StatusOK},
		{"root", root, rootTok, "GET", "/api/classes/evening/board", http.StatusOK},
	} {
		code, _, _ := do(t, tc.c, tc.method, ts.URL+tc.path, "", map[string]string{csrfHeader: tc.tok})
		if code != tc.want {
			t.Errorf("%s %s %s: got %d, want %d", tc.who, tc.method, tc.path, code, tc.want)
		}
	}
	if slices.ContainsFunc(ts.app.classroom.calls(), func(c string) bool {
		return strings.HasPrefix(c, "instructor reset") || strings.HasPrefix(c, "instructor end") ||
			strings.HasPrefix(c, "instructor extend") || strings.HasPrefix(c, "close ")
	}) {
		t.Errorf("refused requests acted: %v", ts.app.classroom.calls())
	}

	// Without the CSRF token nothing is done; with it, ada acts on her
	// class's learner; an admin on any class.
	if code, _, _ := do(t, ada, "POST", ts.URL+"/api/classes/morning/sessions/bob-1/end", "", nil); code != http.StatusForbidden {
		t.Errorf("end without CSRF token: got %d, want 403", code)
	}
	for _, tc := range []struct {
		c         *http.Client
		tok, path string
		call      string
	}{
		{ada, adaTok, "/api/classes/morning/sessions/bob-1/reset", "instructor reset bob-1"},
		{ada, adaTok, "/api/classes/morning/sessions/bob-1/end", "instructor end bob-1"},
		{root, rootTok, "/api/classes/evening/close", "close evening"},
		{ada, adaTok, "/api/classes/morning/close", "close morning"},
	} {
		if code, body, _ := do(t, tc.c, "POST", ts.URL+tc.path, "", map[string]string{csrfHeader: tc.tok}); code != http.StatusOK {
			t.Errorf("POST %s: got %d %s, want 200", tc.path, code, body)
		}
		if calls := ts.app.classroom.calls(); !slices.Contains(calls, tc.call) {
			t.Errorf("POST %s: calls %v, want %q", tc.path, calls, tc.call)
		}
	}
	// Extending takes its time from the body, in milliseconds: ada gives
	// her learner time, an admin too; no time, or not a number, is bad
	// input, and so is the minutes the page once sent.
	for _, tc := range []struct {
		c               *http.Client
		tok, path, body string
		want            int
		call            string
	}{
		{ada, adaTok, "/api/classes/morning/sessions/bob-1/extend", `{"byMs": 900000}`, http.StatusOK, "instructor extend bob-1 by 15m0s"},
		{root, rootTok, "/api/classes/morning/sessions/bob-1/extend", `{"byMs": 300000}`, http.StatusOK, "instructor extend bob-1 by 5m0s"},
		{ada, adaTok, "/api/classes/morning/sessions/bob-1/extend", `{}`, http.StatusBadRequest, ""},
		{ada, adaTok, "/api/classes/morning/sessions/bob-1/extend", `{"byMs": "lots"}`, http.StatusBadRequest, ""},
		{ada, adaTok, "/api/classes/morning/sessions/bob-1/extend", `{"minutes": 15}`, http.StatusBadRequest, ""},
		{ada, adaTok, "/api/classes/evening/sessions/bob-1/extend", `{"byMs": 900000}`, http.StatusForbidden, ""},
	} {
		before := len(ts.app.classroom.calls())
		if code, body, _ := do(t, tc.c, "POST", ts.URL+tc.path, tc.body, map[string]string{csrfHeader: tc.tok}); code != tc.want {
			t.Errorf("POST %s %s: got %d %s, want %d", tc.path, tc.body, code, body, tc.want)
		}
		var got string
		if calls := ts.app.classroom.calls()[before:]; len(calls) > 0 {
			got = calls[len(calls)-1]
		}
		if got != tc.call {
			t.Errorf("POST %s %s: got call %q, want %q", tc.path, tc.body, got, tc.call)
		}
	}

	code, body, h := do(t, ada, "GET", ts.URL+"/api/classes/morning/export.csv", "", nil)
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/csv") || !strings.HasPrefix(body, "learner,") ||
		h.Get("Content-Disposition") != `attachment; filename="morning.csv"` {
		t.Errorf("export: got %d %q %q %q, want the CSV as morning.csv", code, h.Get("Content-Type"), h.Get("Content-Disposition"), body)
	}
}

// TestInstructorWatchesAMembersStreams: the class's instructor receives
// the member's operator log on the learner's own stream route, named
// through the class; another instructor is refused.
func TestInstructorWatchesAMembersStreams(t *testing.T) {
	streams := newFakeStreams()
	streams.log("info", "PostgresCluster/prod-db", "reconciled")
	ts := newTestServerWith(t, t.TempDir(), func(c *Config) { c.Streams = streams })
	ada, _ := ts.instructorSignIn(t, "ada", "ada-password")
	bob, _ := ts.instructorSignIn(t, "bob", "bob-password")
	if _, code := dialWSAs(t, ts, bob, "/api/sessions/bob-1/streams/log?class=morning", ts.URL); code != http.StatusNotFound {
		t.Errorf("bob on ada's member's log: got %d, want 404", code)
	}
	conn, code := dialWSAs(t, ts, ada, "/api/sessions/bob-1/streams/log?class=morning", ts.URL)
	if code != http.StatusSwitchingProtocols {
		t.Fatalf("ada on her member's log: got %d, want 101", code)
	}
	var hello, line frame.Frame
	if err := conn.ReadJSON(&hello); err != nil || hello.Type != "hello" {
		t.Fatalf("first frame: got %+v, %v; want hello", hello, err)
	}
	if err := conn.ReadJSON(&line); err != nil || !strings.Contains(fmtAny(line.Data), "reconciled") {
		t.Errorf("second frame: got %+v, %v; want the log line", line, err)
	}
}

func fmtAny(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestInstructorPagesInBothLanguages renders the instructor's pages in
// each language and looks for a missing key and the language's words.
func TestInstructorPagesInBothLanguages(t *testing.T) {
	ts := newTestServer(t)
	ada, _ := ts.instructorSignIn(t, "ada", "ada-password")
	jar, _ := cookiejar.New(nil)
	anon := &http.Client{Jar: jar}
	want := map[string]string{"en": "Your classes", "ko": "내 수업"}
	login := map[string]string{"en": "Instructor sign-in", "ko": "강사 로그인"}
	for _, l := range langs {
		for _, tc := range []struct {
			c    *http.Client
			path string
			want string
		}{
			{anon, "/instructor/login", login[l]},
			{ada, "/instructor", want[l]},
			{ada, "/instructor/classes/morning", want[l]},
			{ada, "/instructor/classes/morning/sessions/bob-1", want[l]},
		} {
			code, body, _ := do(t, tc.c, "GET", ts.URL+tc.path, "", map[string]string{"Accept-Language": l})
			if code != http.StatusOK {
				t.Errorf("%s GET %s: got %d, want 200", l, tc.path, code)
			}
			if m := regexp.MustCompile(`\[[a-z]+\.[a-z.]+\]`).FindString(body); m != "" {
				t.Errorf("%s GET %s: shows missing key %s", l, tc.path, m)
			}
			if !strings.Contains(body, tc.want) {
				t.Errorf("%s GET %s: no %q", l, tc.path, tc.want)
			}
		}
	}
}
