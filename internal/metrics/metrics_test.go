package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"oplab.dev/oplab/internal/store"
)

// TestSessionsFromStore reads the session counts from a real store.
func TestSessionsFromStore(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, state := range []string{"ready", "ready", "in-exercise", "completed"} {
		s := &store.Session{ID: string(rune('a' + i)), Learner: "l", Lab: "failover", Cluster: "c", Provider: "embedded", State: state}
		if err := st.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	m := New(Options{Sessions: st, States: []string{"provisioning", "ready"}})
	want := `# HELP oplab_sessions Sessions in each state, as stored.
# TYPE oplab_sessions gauge
oplab_sessions{state="completed"} 1
oplab_sessions{state="in-exercise"} 1
oplab_sessions{state="provisioning"} 0
oplab_sessions{state="ready"} 2
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "oplab_sessions"); err != nil {
		t.Error(err)
	}
}

type failingCounter struct{}

func (failingCounter) CountSessions(context.Context) (map[string]int, error) {
	return nil, errors.New("store unreachable")
}

// TestHandler scrapes /metrics as Prometheus would: every family is there,
// named by the conventions, and a failing store costs only its own metric.
func TestHandler(t *testing.T) {
	t.Parallel()
	m := New(Options{Sessions: failingCounter{}, Queued: func() int { return 4 }})
	m.ObserveProvisioning("embedded", 2*time.Second, nil)
	m.ObserveCheck("failover", 300*time.Millisecond, true, nil)
	m.SetWarmPool("embedded", "failover", 3)
	m.WebSocketOpened(StreamLog)
	m.ConsoleCommand(ConsoleRefused)
	m.Refused(RefusedClassFull)

	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status: got %d, want 200\n%s", resp.StatusCode, body)
	}
	for _, want := range []string{
		`oplab_provisioning_duration_seconds_bucket{outcome="ok",provider="embedded",le="2"} 1`,
		`oplab_check_duration_seconds_count{lab="failover",outcome="ok"} 1`,
		`oplab_warm_pool_clusters{lab="failover",provider="embedded"} 3`,
		`oplab_websocket_clients{stream="log"} 1`,
		`oplab_console_commands_total{outcome="refused"} 1`,
		`oplab_refusals_total{reason="class_full"} 1`,
		`oplab_admission_queue 4`,
		`go_goroutines `,
		`process_cpu_seconds_total `,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(string(body), "oplab_sessions{") {
		t.Errorf("/metrics has oplab_sessions although the store failed:\n%s", body)
	}
}

type counts map[string]int

func (c counts) CountSessions(context.Context) (map[string]int, error) { return c, nil }

// TestLint checks every family against Prometheus's naming conventions.
func TestLint(t *testing.T) {
	t.Parallel()
	m := New(Options{Sessions: counts{"ready": 1}, Queued: func() int { return 0 }})
	m.ObserveProvisioning("embedded", 2*time.Second, nil)
	m.ObserveCheck("failover", 300*time.Millisecond, true, nil)
	m.SetWarmPool("embedded", "failover", 3)
	m.WebSocketOpened(StreamLog)
	m.ConsoleCommand(ConsoleOK)
	m.Refused(RefusedClassFull)
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
	if n, err := testutil.GatherAndCount(m.Registry()); err != nil || n < 7 {
		t.Errorf("metrics gathered: got %d, %v", n, err)
	}
}

func TestRecorders(t *testing.T) {
	t.Parallel()
	m := New(Options{})
	closeA := m.WebSocketOpened(StreamConsole)
	closeB := m.WebSocketOpened(StreamConsole)
	closeA()
	closeA() // a second close must not count twice
	if got := testutil.ToFloat64(m.wsClients.WithLabelValues("console")); got != 1 {
		t.Errorf("console clients after one of two closed (twice): got %v, want 1", got)
	}
	closeB()
	if got := testutil.ToFloat64(m.wsClients.WithLabelValues("console")); got != 0 {
		t.Errorf("console clients after both closed: got %v, want 0", got)
	}

	m.ObserveCheck("rbac", time.Second, false, nil)
	m.ObserveCheck("rbac", time.Second, false, errors.New("cluster gone"))
	m.ObserveCheck("rbac", 3*time.Second, true, nil)
	m.ObserveProvisioning("embedded", time.Minute, errors.New("etcd did not start"))
	for _, tt := range []struct {
		labels string
		want   int
	}{
		{`oplab_check_duration_seconds_count{lab="rbac",outcome="failed"}`, 1},
		{`oplab_check_duration_seconds_count{lab="rbac",outcome="error"}`, 1},
		{`oplab_check_duration_seconds_count{lab="rbac",outcome="ok"}`, 1},
		{`oplab_provisioning_duration_seconds_count{outcome="error",provider="embedded"}`, 1},
	} {
		if n := countOf(t, m, tt.labels); n != tt.want {
			t.Errorf("%s: got %d, want %d", tt.labels, n, tt.want)
		}
	}
	m.SetWarmPool("embedded", "rbac", 2)
	m.SetWarmPool("embedded", "rbac", 1)
	m.Refused(RefusedRateLimit)
	m.Refused(RefusedRateLimit)
	want := `# HELP oplab_warm_pool_clusters Ready clusters waiting in the warm pool.
# TYPE oplab_warm_pool_clusters gauge
oplab_warm_pool_clusters{lab="rbac",provider="embedded"} 1
# HELP oplab_refusals_total Requests refused, by reason.
# TYPE oplab_refusals_total counter
oplab_refusals_total{reason="rate_limit"} 2
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "oplab_warm_pool_clusters", "oplab_refusals_total"); err != nil {
		t.Error(err)
	}

	// Packages without metrics hold a nil *Metrics.
	var none *Metrics
	none.ObserveCheck("x", time.Second, true, nil)
	none.ObserveProvisioning("x", time.Second, nil)
	none.SetWarmPool("x", "y", 1)
	none.WebSocketOpened(StreamLog)()
	none.ConsoleCommand(ConsoleOK)
	none.Refused(RefusedCapacity)
}

// countOf reads a histogram's _count line from the exposition.
func countOf(t *testing.T, m *Metrics, line string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for l := range strings.Lines(rec.Body.String()) {
		if rest, ok := strings.CutPrefix(l, line+" "); ok {
			var n int
			for _, c := range strings.TrimSpace(rest) {
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	return 0
}
