package server

import (
	"encoding/json"
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var form = map[string]string{"Content-Type": "application/x-www-form-urlencoded"}

// newJar returns a client with a cookie jar that does not follow
// redirects.
func newJar() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// formToken opens path with c and returns the form's CSRF token.
func formToken(t *testing.T, ts *testServer, c *http.Client, path string) string {
	t.Helper()
	code, body, _ := do(t, c, "GET", ts.URL+path, "", nil)
	if code != http.StatusOK {
		t.Fatalf("GET %s: got %d, want 200", path, code)
	}
	_, rest, ok := strings.Cut(body, `name="_csrf" value="`)
	if !ok {
		t.Fatalf("GET %s: no form token in\n%s", path, body)
	}
	tok, _, _ := strings.Cut(rest, `"`)
	return tok
}

// pageCSRF returns the signed-in page's CSRF token from body.
func pageCSRF(body string) string {
	_, rest, _ := strings.Cut(body, `name="csrf-token" content="`)
	tok, _, _ := strings.Cut(rest, `"`)
	return tok
}

// joinAs joins the class of code as name with a fresh client, and returns
// the client (signed in), its CSRF token and the page that shows the
// rejoin code.
func joinAs(t *testing.T, ts *testServer, code, name string) (*http.Client, string, string) {
	t.Helper()
	c := newJar()
	tok := formToken(t, ts, c, "/join")
	st, body, _ := do(t, c, "POST", ts.URL+"/join", url.Values{"_csrf": {tok}, "code": {code}, "name": {name}}.Encode(), form)
	if st != http.StatusOK {
		t.Fatalf("join %s as %s: got %d, want 200:\n%s", code, name, st, body)
	}
	return c, pageCSRF(body), body
}

func labIDs(t *testing.T, ts *testServer, c *http.Client) []string {
	t.Helper()
	code, body, _ := do(t, c, "GET", ts.URL+"/api/labs", "", nil)
	var labs []LabEntry
	if code != http.StatusOK || json.Unmarshal([]byte(body), &labs) != nil {
		t.Fatalf("GET /api/labs: got %d %s", code, body)
	}
	var out []string
	for _, l := range labs {
		out = append(out, l.ID)
	}
	return out
}

// TestJoinSignsInAClassMember: the sign-in page leads to /join; joining
// shows the rejoin code once and signs the learner in as the class's
// member, who sees the class's labs in its order; the rejoin code signs
// another device in as the same learner.
func TestJoinSignsInAClassMember(t *testing.T) {
	ts := newTestServer(t)
	if _, body, _ := do(t, newJar(), "GET", ts.URL+"/", "", nil); !strings.Contains(body, `href="/join"`) {
		t.Errorf("the sign-in page has no link to /join:\n%s", body)
	}
	c, csrf, body := joinAs(t, ts, "morning", "Alice")
	for _, want := range []string{`id="rejoin-code">RJ001-SECRET<`, `id="joined-class">morning<`, `id="joined-name">Alice<`,
		"Write it down: it gets you back in from another device", `href="/"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the joined page lacks %q:\n%s", want, body)
		}
	}
	if csrf == "" {
		t.Error("the joined page has no CSRF token for its sign-out form")
	}
	if got, want := labIDs(t, ts, c), []string{"rbac", "failover"}; !slices.Equal(got, want) {
		t.Errorf("the member's labs: got %v, want %v", got, want)
	}
	_, page, _ := do(t, c, "GET", ts.URL+"/", "", nil)
	if strings.Contains(page, `data-lab="quota"`) || strings.Index(page, `data-lab="rbac"`) > strings.Index(page, `data-lab="failover"`) {
		t.Errorf("the catalogue page: want rbac then failover, no quota:\n%s", page)
	}
	if _, again, _ := do(t, c, "GET", ts.URL+"/", "", nil); strings.Contains(again, "RJ001-SECRET") {
		t.Error("the rejoin code is shown again")
	}

	other := newJar()
	tok := formToken(t, ts, other, "/join?rejoin=1")
	code, _, h := do(t, other, "POST", ts.URL+"/rejoin", url.Values{"_csrf": {tok}, "rejoin": {"rj001-secret"}}.Encode(), form)
	if code != http.StatusSeeOther || h.Get("Location") != "/" {
		t.Fatalf("rejoin: got %d to %q, want 303 to /", code, h.Get("Location"))
	}
	if got, want := labIDs(t, ts, other), []string{"rbac", "failover"}; !slices.Equal(got, want) {
		t.Errorf("the other device's labs: got %v, want %v", got, want)
	}
	// Both devices are the same learner: a session started on one is
	// the other's too.
	_, home, _ := do(t, other, "GET", ts.URL+"/", "", nil)
	if st, b, _ := do(t, other, "POST", ts.URL+"/api/labs/rbac/start", "{}", map[string]string{csrfHeader: pageCSRF(home)}); st != http.StatusOK {
		t.Fatalf("start on the other device: got %d %s", st, b)
	}
	if st, b, _ := do(t, c, "GET", ts.URL+"/api/sessions/learner-1-rbac", "", nil); st != http.StatusOK {
		t.Errorf("the first device on the session the other started: got %d %s, want 200", st, b)
	}

	// The local learner's sign-in link still works, and is not a member.
	local, _ := ts.signIn(t)
	if got := labIDs(t, ts, local); !slices.Equal(got, []string{"failover", "rbac", "quota"}) {
		t.Errorf("the local learner's labs: got %v, want every lab", got)
	}
}

// TestJoinRefusals: each refusal is said on the page in the learner's
// language with its status, the typed name kept, and no one signed in.
func TestJoinRefusals(t *testing.T) {
	ts := newTestServer(t)
	joinAs(t, ts, "MORNING", "Taken")
	tests := []struct {
		name, code, display string
		status              int
		en, ko              string
	}{
		{"wrong code", "NOPE", "Alice", http.StatusBadRequest, "That code is not right", "코드가 맞지 않습니다"},
		{"closed class", "CLOSED", "Alice", http.StatusForbidden, "The class is closed.", "수업이 닫혔습니다"},
		{"full class", "FULL", "Alice", http.StatusConflict, "The class is full.", "수업 정원이 찼습니다"},
		{"no name", "MORNING", " ", http.StatusBadRequest, "Choose a name of 1 to 40 letters", "1~40자의 이름"},
		{"name taken", "MORNING", "Taken", http.StatusConflict, "already has that name", "같은 이름이 이미 있습니다"},
	}
	for _, tt := range tests {
		for lang, want := range map[string]string{"en": tt.en, "ko": tt.ko} {
			c := newJar()
			tok := formToken(t, ts, c, "/join")
			hdr := map[string]string{"Content-Type": form["Content-Type"], "Accept-Language": lang}
			code, body, h := do(t, c, "POST", ts.URL+"/join", url.Values{"_csrf": {tok}, "code": {tt.code}, "name": {tt.display}}.Encode(), hdr)
			if code != tt.status || !strings.Contains(html.UnescapeString(body), want) || !strings.Contains(body, `id="join-error"`) {
				t.Errorf("%s (%s): got %d, want %d with %q:\n%s", tt.name, lang, code, tt.status, want, body)
			}
			if !strings.Contains(body, `name="name" value="`+html.EscapeString(tt.display)+`"`) {
				t.Errorf("%s (%s): the typed name %q is not kept", tt.name, lang, tt.display)
			}
			for _, ck := range h.Values("Set-Cookie") {
				if strings.HasPrefix(ck, sessionCookie+"=") {
					t.Errorf("%s (%s): a session cookie was set: %s", tt.name, lang, ck)
				}
			}
		}
	}
	// The client has sent wrong codes: from here on it waits, even with
	// the right code, and is told for how long.
	c := newJar()
	tok := formToken(t, ts, c, "/join")
	for range fakeWrongCodes {
		do(t, c, "POST", ts.URL+"/join", url.Values{"_csrf": {tok}, "code": {"WRONG"}, "name": {"Mallory"}}.Encode(), form)
	}
	code, body, h := do(t, c, "POST", ts.URL+"/join", url.Values{"_csrf": {tok}, "code": {"MORNING"}, "name": {"Mallory"}}.Encode(), form)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") != "6" || !strings.Contains(body, "Too many wrong codes from here. Try again in 6.0s.") {
		t.Errorf("after %d wrong codes: got %d (Retry-After %q), want 429, Retry-After 6 and the wait said:\n%s", fakeWrongCodes, code, h.Get("Retry-After"), body)
	}
	tok = formToken(t, ts, c, "/join?rejoin=1")
	code, body, _ = do(t, c, "POST", ts.URL+"/rejoin", url.Values{"_csrf": {tok}, "rejoin": {"RJ999-SECRET"}}.Encode(), form)
	if code != http.StatusTooManyRequests || !strings.Contains(body, `id="rejoin-form"`) {
		t.Errorf("rejoin from the same client: got %d, want 429 on the rejoin form", code)
	}
	code, body, _ = do(t, newJar(), "GET", ts.URL+"/join?rejoin=1", "", nil)
	if code != http.StatusOK || !strings.Contains(body, `id="rejoin-form"`) || strings.Contains(body, `id="join-form"`) {
		t.Errorf("GET /join?rejoin=1: got %d, want the rejoin form only", code)
	}
}

// TestJoinFormIsProtected: a join posted without the page's token, with a
// token of another visitor, from another origin or to another host is
// refused before the application hears of it.
func TestJoinFormIsProtected(t *testing.T) {
	ts := newTestServer(t)
	c := newJar()
	tok := formToken(t, ts, c, "/join")
	otherTok := formToken(t, ts, newJar(), "/join")
	good := url.Values{"_csrf": {tok}, "code": {"MORNING"}, "name": {"Alice"}}
	tests := []struct {
		name   string
		client *http.Client
		body   url.Values
		hdr    map[string]string
		want   int
	}{
		{"no token", c, url.Values{"code": {"MORNING"}, "name": {"Alice"}}, nil, http.StatusForbidden},
		{"another visitor's token", c, url.Values{"_csrf": {otherTok}, "code": {"MORNING"}, "name": {"Alice"}}, nil, http.StatusForbidden},
		{"no join cookie", newJar(), good, nil, http.StatusForbidden},
		{"another origin", c, good, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"another host", c, good, map[string]string{"Host": "evil.example"}, http.StatusMisdirectedRequest},
	}
	for _, tt := range tests {
		hdr := map[string]string{"Content-Type": form["Content-Type"]}
		for k, v := range tt.hdr {
			hdr[k] = v
		}
		code, body, _ := do(t, tt.client, "POST", ts.URL+"/join", tt.body.Encode(), hdr)
		if code != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, code, tt.want)
		}
		if tt.want == http.StatusForbidden && !strings.Contains(body, "The form expired") {
			t.Errorf("%s: the page does not say the form expired:\n%s", tt.name, body)
		}
	}
	for _, call := range ts.app.learning.calls() {
		if strings.HasPrefix(call, "join") {
			t.Errorf("the application was asked to join: %q", call)
		}
	}
	if code, _, _ := do(t, c, "POST", ts.URL+"/join", good.Encode(), form); code != http.StatusOK {
		t.Errorf("the page's own form: got %d, want 200", code)
	}
}

// TestClassMembersReachOnlyTheirOwnSessions: two members of one class
// each start a lab; neither reaches the other's session, its streams or
// its console, which answer as a session that does not exist.
func TestClassMembersReachOnlyTheirOwnSessions(t *testing.T) {
	ts := newTestServerWith(t, t.TempDir(), func(c *Config) { c.Streams = newFakeStreams() })
	alice, aliceCSRF, _ := joinAs(t, ts, "MORNING", "Alice")
	bob, bobCSRF, _ := joinAs(t, ts, "MORNING", "Bob")
	for _, m := range []struct {
		c    *http.Client
		csrf string
	}{{alice, aliceCSRF}, {bob, bobCSRF}} {
		if code, body, _ := do(t, m.c, "POST", ts.URL+"/api/labs/failover/start", "{}", map[string]string{csrfHeader: m.csrf}); code != http.StatusOK {
			t.Fatalf("start: got %d %s", code, body)
		}
	}
	aliceS, bobS := "learner-1-failover", "learner-2-failover"
	for _, r := range sessionRoutes {
		for _, tc := range []struct {
			who    *http.Client
			csrf   string
			id     string
			status int
		}{{bob, bobCSRF, aliceS, http.StatusNotFound}, {alice, aliceCSRF, bobS, http.StatusNotFound},
			{alice, aliceCSRF, aliceS, http.StatusOK}, {bob, bobCSRF, bobS, http.StatusOK}} {
			path := strings.Replace(r.path, "%s", tc.id, 1)
			if code, body, _ := do(t, tc.who, r.method, ts.URL+path, r.body, map[string]string{csrfHeader: tc.csrf}); code != tc.status {
				t.Errorf("%s %s: got %d %s, want %d", r.method, path, code, body, tc.status)
			}
		}
	}
	for _, tc := range []struct {
		who  *http.Client
		path string
		want int
	}{
		{bob, "/api/sessions/" + aliceS + "/streams/log", http.StatusNotFound},
		{bob, "/api/sessions/" + aliceS + "/streams/cluster", http.StatusNotFound},
		{bob, "/api/events?session=" + aliceS, http.StatusNotFound},
		{alice, "/api/sessions/" + aliceS + "/streams/log", http.StatusSwitchingProtocols},
		{alice, "/api/events?session=" + aliceS, http.StatusSwitchingProtocols},
	} {
		if _, code := dialWSAs(t, ts, tc.who, tc.path, ts.URL); code != tc.want {
			t.Errorf("dial %s: got %d, want %d", tc.path, code, tc.want)
		}
	}
	for _, call := range ts.app.learning.calls() {
		if strings.Contains(call, aliceS) && strings.Contains(call, bobS) {
			t.Errorf("a call mixes the two sessions: %q", call)
		}
	}
}

// TestStartRefusedByTheClass: a member's start that the class refuses is
// answered with its status and the reason in the page's language, which
// the lab page shows as the start's error. A closed class has signed its
// members out: their start is refused as a signed-out caller's.
func TestStartRefusedByTheClass(t *testing.T) {
	ts := newTestServer(t)
	c, csrf, _ := joinAs(t, ts, "MORNING", "Alice")
	tests := []struct {
		name, lab, lang string
		close           bool
		status          int
		want, reason    string
	}{
		{"lab not in the class", "quota", "en", false, http.StatusForbidden, "This lab is not part of your class.", RefusalNotInClass},
		{"lab not in the class, in Korean", "quota", "ko", false, http.StatusForbidden, "이 실습은 수업에 포함되어 있지 않습니다.", RefusalNotInClass},
		{"class closed", "rbac", "en", true, http.StatusUnauthorized, "sign in first", ""},
	}
	for _, tt := range tests {
		ts.app.classroom.setClosed("morning", tt.close)
		code, body, _ := do(t, c, "POST", ts.URL+"/api/labs/"+tt.lab+"/start", "{}", map[string]string{csrfHeader: csrf, "Accept-Language": tt.lang})
		var e struct{ Error, Reason string }
		if code != tt.status || json.Unmarshal([]byte(body), &e) != nil || e.Error != tt.want || e.Reason != tt.reason {
			t.Errorf("%s: got %d %s, want %d with %q (%s)", tt.name, code, body, tt.status, tt.want, tt.reason)
		}
	}
}

// TestJoinPagesInBothLanguages renders the join and rejoin forms and the
// joined page in each language, looking for a missing key ("[key]") and
// for the language's own words.
func TestJoinPagesInBothLanguages(t *testing.T) {
	ts := newTestServer(t)
	missing := regexp.MustCompile(`\[[a-z]+\.[a-z.-]+\]`)
	words := map[string][]string{"en": {"Join a class", "Come back to your class", "Your personal code:"},
		"ko": {"수업 참여", "수업으로 돌아가기", "개인 코드:"}}
	for _, l := range langs {
		c := newJar()
		hdr := map[string]string{"Accept-Language": l}
		_, join, _ := do(t, c, "GET", ts.URL+"/join", "", hdr)
		_, rejoin, _ := do(t, c, "GET", ts.URL+"/join?rejoin=1", "", hdr)
		tok := formToken(t, ts, c, "/join")
		hdr["Content-Type"] = form["Content-Type"]
		_, joined, _ := do(t, c, "POST", ts.URL+"/join", url.Values{"_csrf": {tok}, "code": {"MORNING"}, "name": {"Learner " + l}}.Encode(), hdr)
		for i, body := range []string{join, rejoin, joined} {
			if m := missing.FindString(body); m != "" {
				t.Errorf("%s page %d: shows missing key %s", l, i, m)
			}
			if !strings.Contains(body, words[l][i]) || !strings.Contains(body, `<html lang="`+l+`">`) {
				t.Errorf("%s page %d: want %q in %s:\n%s", l, i, words[l][i], l, body)
			}
		}
	}
}
