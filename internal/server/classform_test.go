package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestClassForms: the dashboard's create and edit forms reach the
// application layer as they were filled in, for an instructor with the
// CSRF token only; an edit of another's class is refused, a stale one
// says so in the page's language.
func TestClassForms(t *testing.T) {
	ts := newTestServer(t)
	ada, adaTok := ts.instructorSignIn(t, "ada", "ada-password")
	create := `{"name":"noon","labs":["rbac","failover"],"capacity":"12","timeLimit":"45m","zone":"Europe/Paris"}`
	edit := func(version int) string {
		b, _ := json.Marshal(ClassForm{Name: "morning", Labs: []string{"failover"}, Version: int64(version), NewCode: true})
		return string(b)
	}
	for _, tc := range []struct {
		name     string
		c        *http.Client
		tok      string
		path     string
		body     string
		lang     string
		want     int
		wantBody string
		call     string
	}{
		{"a learner cannot create", ts.client, ts.csrf, "/api/classes", create, "en", http.StatusNotFound, "", ""},
		{"a learner cannot edit", ts.client, ts.csrf, "/api/classes/morning", edit(fakeClassVersion), "en", http.StatusNotFound, "", ""},
		{"no CSRF token", ada, "", "/api/classes", create, "en", http.StatusForbidden, "", ""},
		{"create", ada, adaTok, "/api/classes", create, "en", http.StatusOK, `"joinCode":"NEWCO-DE123"`, "create noon [rbac failover] 12 45m"},
		{"bad input", ada, adaTok, "/api/classes", `{"name":"x"}`, "en", http.StatusBadRequest, "choose a lab", ""},
		{"not JSON", ada, adaTok, "/api/classes", `name=x`, "en", http.StatusBadRequest, "read request", ""},
		{"another's class", ada, adaTok, "/api/classes/evening", edit(fakeClassVersion), "en", http.StatusForbidden, "", ""},
		{"stale edit", ada, adaTok, "/api/classes/morning", edit(1), "en", http.StatusConflict, "changed meanwhile", ""},
		{"stale edit in Korean", ada, adaTok, "/api/classes/morning", edit(1), "ko", http.StatusConflict, `"reason":"changed"`, ""},
		{"edit", ada, adaTok, "/api/classes/morning", edit(fakeClassVersion), "en", http.StatusOK, `"version":4`, "edit morning [failover] new-code=true reopen=false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts.app.classroom.forgetCalls()
			h := map[string]string{"Content-Type": "application/json", "Accept-Language": tc.lang}
			if tc.tok != "" {
				h[csrfHeader] = tc.tok
			}
			code, body, _ := do(t, tc.c, "POST", ts.URL+tc.path, tc.body, h)
			if code != tc.want || !strings.Contains(body, tc.wantBody) {
				t.Errorf("got %d %s, want %d with %q", code, body, tc.want, tc.wantBody)
			}
			calls := ts.app.classroom.calls()
			if tc.call != "" && !slices.Contains(calls, tc.call) || tc.call == "" && slices.ContainsFunc(calls, func(c string) bool {
				return strings.HasPrefix(c, "create ") || strings.HasPrefix(c, "edit ")
			}) {
				t.Errorf("calls %v, want %q", calls, tc.call)
			}
		})
	}
}

// TestDebriefRoutes: a session's debrief reaches its learner and the
// instructor of its class only.
func TestDebriefRoutes(t *testing.T) {
	ts := newTestServer(t)
	ada, _ := ts.instructorSignIn(t, "ada", "ada-password")
	bob, _ := ts.instructorSignIn(t, "bob", "bob-password")
	for _, tc := range []struct {
		who  string
		c    *http.Client
		path string
		want int
	}{
		{"learner, own session", ts.client, "/api/sessions/alice-1/debrief", http.StatusOK},
		{"learner, another's session", ts.client, "/api/sessions/bob-1/debrief", http.StatusNotFound},
		{"learner, through the class", ts.client, "/api/classes/morning/sessions/bob-1/debrief", http.StatusNotFound},
		{"the class's instructor", ada, "/api/classes/morning/sessions/bob-1/debrief", http.StatusOK},
		{"the class's instructor, a session outside it", ada, "/api/classes/morning/sessions/alice-1/debrief", http.StatusNotFound},
		{"the class's instructor, the learner's route", ada, "/api/sessions/bob-1/debrief", http.StatusNotFound},
		{"another instructor", bob, "/api/classes/morning/sessions/bob-1/debrief", http.StatusForbidden},
	} {
		code, body, _ := do(t, tc.c, "GET", ts.URL+tc.path, "", nil)
		if code != tc.want {
			t.Errorf("%s: GET %s: got %d, want %d", tc.who, tc.path, code, tc.want)
		}
		if code == http.StatusOK && !strings.Contains(body, `"kind":"recovered"`) {
			t.Errorf("%s: GET %s: got %s, want the debrief", tc.who, tc.path, body)
		}
	}
}
