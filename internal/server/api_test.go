package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"oplab.dev/oplab/internal/metrics"
)

// sessionRoutes are the routes on a session, %s its id.
var sessionRoutes = []struct{ method, path, body string }{
	{"GET", "/api/sessions/%s", ""},
	{"GET", "/api/sessions/%s/timeline", ""},
	{"POST", "/api/sessions/%s/chaos", `{"exercise":"delete-primary"}`},
	{"POST", "/api/sessions/%s/check", "{}"},
	{"POST", "/api/sessions/%s/hint", "{}"},
	{"POST", "/api/sessions/%s/reset", "{}"},
	{"POST", "/api/sessions/%s/stop", "{}"},
	{"GET", "/api/sessions/%s/quiz", ""},
	{"POST", "/api/sessions/%s/quiz", `{"answers":{"q1":["b"]}}`},
	{"POST", "/api/sessions/%s/console", `{"line":"kubectl get pods"}`},
	{"GET", "/api/sessions/%s/complete?line=kubectl", ""},
	{"POST", "/api/sessions/%s/apply", `{"yaml":"a: b","dryRun":true}`},
	{"GET", "/sessions/%s/summary", ""},
	{"GET", "/sessions/%s/quiz", ""},
}

// TestOwnership: every route on a session answers another learner's
// session exactly as a session that does not exist, and never acts on it.
func TestOwnership(t *testing.T) {
	ts := newTestServer(t)
	hdr := map[string]string{csrfHeader: ts.csrf}
	routes := sessionRoutes
	for _, r := range routes {
		var bodies [2]string
		for i, id := range []string{"bob-1", "nobody-1"} {
			path := strings.Replace(r.path, "%s", id, 1)
			code, body, _ := do(t, ts.client, r.method, ts.URL+path, r.body, hdr)
			if code != http.StatusNotFound {
				t.Errorf("%s %s: got %d, want 404", r.method, path, code)
			}
			bodies[i] = strings.ReplaceAll(body, id, "ID")
		}
		if bodies[0] != bodies[1] {
			t.Errorf("%s %s: another learner's session answers %q, a missing one %q", r.method, r.path, bodies[0], bodies[1])
		}
		path := strings.Replace(r.path, "%s", "alice-1", 1)
		if code, body, _ := do(t, ts.client, r.method, ts.URL+path, r.body, hdr); code != http.StatusOK {
			t.Errorf("%s %s (own session): got %d %s, want 200", r.method, path, code, body)
		}
	}
	// Live streams: another learner's is missing; one's own is refused
	// only because this server has no streams.
	for id, want := range map[string]int{"bob-1": http.StatusNotFound, "alice-1": http.StatusConflict} {
		if code, _, _ := do(t, ts.client, "GET", ts.URL+"/api/sessions/"+id+"/streams/log", "", nil); code != want {
			t.Errorf("GET streams/log of %s: got %d, want %d", id, code, want)
		}
	}
	if code, body, _ := do(t, ts.client, "GET", ts.URL+"/api/sessions/alice-1/streams/log?cursor="+strings.Repeat("9", 65), "", nil); code != http.StatusBadRequest || !strings.Contains(body, "cursor") {
		t.Errorf("GET streams/log with a cursor of 65 characters: got %d %s, want 400 saying why", code, body)
	}
	for _, c := range ts.app.learning.calls() {
		if strings.Contains(c, "bob-1") {
			t.Errorf("the application was called on bob's session: %q", c)
		}
	}
	// Each attempt on bob's session is counted as a refusal (a missing
	// session is not).
	if got, want := counterValue(t, ts.metrics, "oplab_refusals_total", "reason", string(metrics.RefusedForbidden)), float64(len(routes)+1); got != want {
		t.Errorf("oplab_refusals_total{reason=forbidden}: got %v, want %v", got, want)
	}
}

func TestConsoleStreamsOutput(t *testing.T) {
	ts := newTestServer(t)
	code, body, h := do(t, ts.client, "POST", ts.URL+"/api/sessions/alice-1/console",
		`{"line":"kubectl apply -f -","stdin":"kind: Pod"}`, map[string]string{csrfHeader: ts.csrf})
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Fatalf("console: got %d %s", code, h.Get("Content-Type"))
	}
	if want := `ran "kubectl apply -f -" in alice-1 with 9 bytes of stdin`; !strings.Contains(body, want) {
		t.Errorf("console output: got %q, want %q", body, want)
	}
}

func wsURL(ts *testServer, path string) string {
	return "ws" + strings.TrimPrefix(ts.URL, "http") + path
}

func dialWS(t *testing.T, ts *testServer, path, origin string) (*websocket.Conn, int) {
	t.Helper()
	return dialWSAs(t, ts, ts.client, path, origin)
}

// dialWSAs is dialWS with client's cookies.
func dialWSAs(t *testing.T, ts *testServer, client *http.Client, path, origin string) (*websocket.Conn, int) {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	for _, c := range client.Jar.Cookies(mustURL(t, ts.URL)) {
		h.Add("Cookie", c.Name+"="+c.Value)
	}
	conn, resp, err := websocket.DefaultDialer.Dial(wsURL(ts, path), h)
	if err != nil {
		if resp == nil {
			t.Fatalf("dial %s: %v", path, err)
		}
		return nil, resp.StatusCode
	}
	t.Cleanup(func() { conn.Close() })
	return conn, resp.StatusCode
}

func TestWebSocketOriginAndOwnership(t *testing.T) {
	ts := newTestServer(t)
	for _, tc := range []struct {
		name, path, origin string
		want               int
	}{
		{"other origin", "/api/events", "http://evil.example", http.StatusForbidden},
		{"no origin", "/api/events", "", http.StatusForbidden},
		{"another learner's session", "/api/events?session=bob-1", ts.URL, http.StatusNotFound},
		{"own session", "/api/events?session=alice-1", ts.URL, http.StatusSwitchingProtocols},
	} {
		if _, code := dialWS(t, ts, tc.path, tc.origin); code != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, code, tc.want)
		}
	}
}

// TestEventsCarryStartProgressAndTimeline: a page hears the steps of the
// start it asked for and the session's timeline (what the CLI did).
func TestEventsCarryStartProgressAndTimeline(t *testing.T) {
	ts := newTestServer(t)
	conn, code := dialWS(t, ts, "/api/events?session=alice-1", ts.URL)
	if conn == nil {
		t.Fatalf("dial: %d", code)
	}
	time.Sleep(50 * time.Millisecond) // let the subscription register
	if code, body, _ := do(t, ts.client, "POST", ts.URL+"/api/labs/failover/start", "{}", map[string]string{csrfHeader: ts.csrf}); code != http.StatusOK {
		t.Fatalf("start: got %d %s", code, body)
	}
	seen := map[string]int{}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for seen["step"] < 2 || seen["state"] < 1 {
		var u Update
		if err := conn.ReadJSON(&u); err != nil {
			t.Fatalf("read events: %v (seen %v)", err, seen)
		}
		seen[u.Kind]++
	}
}

func TestStartUnknownLab(t *testing.T) {
	ts := newTestServer(t)
	code, body, _ := do(t, ts.client, "POST", ts.URL+"/api/labs/nope/start", "{}", map[string]string{csrfHeader: ts.csrf})
	var e struct{ Error string }
	if code != http.StatusNotFound || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, "nope") {
		t.Errorf("start unknown lab: got %d %s, want 404 naming the lab", code, body)
	}
}

// counterValue returns the value of the counter name whose label has
// value, 0 when there is none.
func counterValue(t *testing.T, m *metrics.Metrics, name, label, value string) float64 {
	t.Helper()
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, mt := range f.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return mt.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestTimelinePages: the timeline is read a page at a time: ?limit= and
// ?after= reach the application, which bounds the page; a page reads on
// after the last seq of the one before; a limit that is not a count is
// refused.
func TestTimelinePages(t *testing.T) {
	ts := newTestServer(t)
	page := func(query string) (int, []Update) {
		t.Helper()
		code, body, _ := do(t, ts.client, "GET", ts.URL+"/api/sessions/alice-1/timeline"+query, "", nil)
		var evs []Update
		if code == http.StatusOK {
			if err := json.Unmarshal([]byte(body), &evs); err != nil {
				t.Fatalf("%s: %v in %s", query, err, body)
			}
		}
		return code, evs
	}
	if code, evs := page(""); code != http.StatusOK || len(evs) != fakePage || evs[0].Seq != 1 {
		t.Errorf("no query: got %d, %d events, want the first page of %d", code, len(evs), fakePage)
	}
	if _, evs := page("?limit=100000"); len(evs) != fakePage {
		t.Errorf("a limit over the page: got %d events, want %d", len(evs), fakePage)
	}
	var all []Update
	for after := int64(0); ; {
		_, evs := page(fmt.Sprintf("?after=%d&limit=50", after))
		if len(evs) > 50 {
			t.Fatalf("limit 50: got %d events", len(evs))
		}
		all = append(all, evs...)
		if len(evs) < 50 {
			break
		}
		after = evs[len(evs)-1].Seq
	}
	if len(all) != fakeTimeline || all[len(all)-1].Seq != fakeTimeline {
		t.Errorf("read page by page: got %d events, want %d", len(all), fakeTimeline)
	}
	for _, q := range []string{"?limit=many", "?limit=-1", "?after=x"} {
		if code, _ := page(q); code != http.StatusBadRequest {
			t.Errorf("%s: got %d, want 400", q, code)
		}
	}
}

// TestEventsReadTheTimelineInPages: the events stream sends a session's
// whole timeline, longer than a page, each event once and in order.
func TestEventsReadTheTimelineInPages(t *testing.T) {
	ts := newTestServer(t)
	conn, code := dialWS(t, ts, "/api/events?session=alice-1", ts.URL)
	if conn == nil {
		t.Fatalf("dial: %d", code)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	for want := int64(1); want <= fakeTimeline; {
		var u Update
		if err := conn.ReadJSON(&u); err != nil {
			t.Fatalf("read events: %v (up to seq %d of %d)", err, want-1, fakeTimeline)
		}
		if u.Seq == 0 {
			continue // an operation's step
		}
		if u.Seq != want {
			t.Fatalf("event seq %d, want %d", u.Seq, want)
		}
		want++
	}
}
