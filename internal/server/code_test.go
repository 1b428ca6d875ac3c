package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// newCodeServer is a test server that builds and formats a learner's code
// (fakeCode).
func newCodeServer(t *testing.T) (*testServer, *fakeCode) {
	t.Helper()
	code := &fakeCode{}
	ts := newTestServerWith(t, t.TempDir(), func(c *Config) { c.Code = code })
	return ts, code
}

// TestFormatRoute: POST /api/sessions/:id/format answers only the
// session's owner, only with the page's CSRF token, and a body it cannot
// read is a 400 that says so; a file that does not parse is an answer.
func TestFormatRoute(t *testing.T) {
	ts, code := newCodeServer(t)
	hdr := map[string]string{csrfHeader: ts.csrf}
	url := func(id string) string { return ts.URL + "/api/sessions/" + id + "/format" }
	messy := `{"files":{"a.go":"package a\nfunc  f( ){\n  return}\n"}}`

	var answers [2]string
	for i, id := range []string{"bob-1", "nobody-1"} {
		c, body, _ := do(t, ts.client, "POST", url(id), messy, hdr)
		if c != http.StatusNotFound {
			t.Errorf("format %s's session: got %d %s, want 404", id, c, body)
		}
		answers[i] = strings.ReplaceAll(body, id, "ID")
	}
	if answers[0] != answers[1] {
		t.Errorf("another learner's session answers %q, a missing one %q", answers[0], answers[1])
	}
	for name, h := range map[string]map[string]string{
		"no token":       nil,
		"wrong token":    {csrfHeader: "nope"},
		"another origin": {csrfHeader: ts.csrf, "Origin": "http://evil.example"},
	} {
		if c, body, _ := do(t, ts.client, "POST", url("alice-1"), messy, h); c != http.StatusForbidden {
			t.Errorf("%s: got %d %s, want 403", name, c, body)
		}
	}
	if calls := code.calls(); len(calls) != 0 {
		t.Fatalf("refused requests reached the application: %q", calls)
	}

	c, body, _ := do(t, ts.client, "POST", url("alice-1"), messy, hdr)
	var got struct {
		OK     bool              `json:"ok"`
		Files  map[string]string `json:"files"`
		Errors []struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(body), &got); c != http.StatusOK || err != nil {
		t.Fatalf("format own session: got %d %s (%v), want 200 and JSON", c, body, err)
	}
	if want := "package a\n\nfunc f() {\n\treturn\n}\n"; !got.OK || got.Files["a.go"] != want {
		t.Errorf("format: got ok %v, a.go %q, want %q", got.OK, got.Files["a.go"], want)
	}

	c, body, _ = do(t, ts.client, "POST", url("alice-1"), `{"files":{"a.go":"package a\n\nfunc f() {\n\tx := := 1\n}\n"}}`, hdr)
	got.OK, got.Errors = true, nil
	if err := json.Unmarshal([]byte(body), &got); c != http.StatusOK || err != nil {
		t.Fatalf("format a syntax error: got %d %s (%v), want 200 and JSON", c, body, err)
	}
	if got.OK || len(got.Errors) == 0 || got.Errors[0].File != "a.go" || got.Errors[0].Line != 4 {
		t.Errorf("format a syntax error on line 4: got %s, want ok false and a.go:4", body)
	}

	for name, tc := range map[string]struct {
		body string
		want int
		says string
	}{
		"broken JSON":         {`{"files":`, http.StatusBadRequest, "read request"},
		"files not an object": {`{"files":["a.go"]}`, http.StatusBadRequest, "read request"},
		"a file not a string": {`{"files":{"a.go":1}}`, http.StatusBadRequest, "read request"},
		"past the body's cap": {`{"files":{"a.go":"` + strings.Repeat("x", 5000) + `"}}`, http.StatusRequestEntityTooLarge, "too large"},
	} {
		c, body, _ := do(t, ts.client, "POST", url("alice-1"), tc.body, hdr)
		if c != tc.want || !strings.Contains(body, tc.says) {
			t.Errorf("%s: got %d %s, want %d saying %q", name, c, body, tc.want, tc.says)
		}
	}
	if n := len(code.calls()); n != 2 {
		t.Errorf("calls of Format: got %d (%q), want 2: the bad bodies are refused before it", n, code.calls())
	}
}

// TestFormatWithoutCode: a server that builds no learner's code has
// nothing to format with.
func TestFormatWithoutCode(t *testing.T) {
	ts := newTestServer(t)
	c, body, _ := do(t, ts.client, "POST", ts.URL+"/api/sessions/alice-1/format", `{"files":{"a.go":"package a\n"}}`, map[string]string{csrfHeader: ts.csrf})
	if c != http.StatusConflict || !strings.Contains(body, "builds no learner's code") {
		t.Errorf("format on a server without Code: got %d %s, want 409", c, body)
	}
}
