package server

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/quiz"
)

// TestJSONConvention: every type the server writes to a browser as JSON
// keeps docs/api.md's convention (see jsonconv.Check). A new field such as
// `Foo time.Duration` fails here until it is a jsonconv.Duration under a
// key ending in Ms. The session's own views, which the application
// hands over as they are, are checked in internal/app; the class and its
// board in internal/board; a live stream's frame in internal/frame.
func TestJSONConvention(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		[]LabEntry{}, SessionRef{}, []Update{}, ApplyResult{}, Completion{}, Debrief{},
		Instructor{}, quiz.View{}, quiz.Outcome{},
	} {
		for _, err := range jsonconv.Check(v) {
			t.Errorf("%T: %v", v, err)
		}
	}
}

// TestJSONDurationsInMillis: the durations of the catalogue reach the
// browser as whole milliseconds under their ...Ms keys (the board's: see
// internal/board).
func TestJSONDurationsInMillis(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC)
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"a lab not started", LabEntry{ID: "failover", Duration: jsonconv.Duration(15 * time.Minute), Requires: []string{}},
			`{"id":"failover","title":"","summary":"","timeLimitMs":900000,"requires":[],"score":0,"total":0}`},
		{"a lab completed", LabEntry{ID: "rbac", Duration: jsonconv.Duration(10 * time.Minute), State: "completed", Session: "s-1", Score: 5, Total: 5,
			Recoveries: []jsonconv.Duration{jsonconv.Duration(1500 * time.Millisecond), jsonconv.Duration(4012 * time.Millisecond)}},
			`{"id":"rbac","title":"","summary":"","timeLimitMs":600000,"requires":null,"state":"completed","session":"s-1","score":5,"total":5,"recoveriesMs":[1500,4012]}`},
		{"an update", Update{Seq: 7, Kind: "chaos", Message: "fault in effect", Time: t0},
			`{"seq":7,"kind":"chaos","message":"fault in effect","at":"2026-03-04T09:30:00Z"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
}

// apiDoc is the page that states the browser's JSON convention and lists
// every endpoint.
const apiDoc = "../../docs/api.md"

// documented matches an endpoint named in the doc's tables: `GET /api/...`.
var documented = regexp.MustCompile("`(GET|POST|PUT|PATCH|DELETE) (/api/[^`]*)`")

// TestAPIDocumented: docs/api.md names every route under /api, and no
// route the server does not have.
func TestAPIDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(apiDoc)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t)
	var routes []string
	for _, r := range ts.s.engine.Routes() {
		if strings.HasPrefix(r.Path, "/api/") {
			routes = append(routes, r.Method+" "+r.Path)
		}
	}
	if len(routes) < 20 {
		t.Fatalf("got %d routes under /api, want the server's every one: %v", len(routes), routes)
	}
	var named []string
	for _, m := range documented.FindAllStringSubmatch(string(doc), -1) {
		named = append(named, m[1]+" "+m[2])
	}
	for _, r := range routes {
		if !slices.Contains(named, r) {
			t.Errorf("route %s: not in %s", r, apiDoc)
		}
	}
	for _, n := range named {
		if !slices.Contains(routes, n) {
			t.Errorf("%s names %s: no such route", apiDoc, n)
		}
	}
}
