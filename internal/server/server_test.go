package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/web"
)

// newTestServer serves the real templates over a provider whose data dir is
// seeded with a cluster record, so the page shows something without a
// control plane.
func newTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	data := t.TempDir()
	dir := filepath.Join(data, "clusters", "alice")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A cluster whose processes are gone: listed as stopped.
	state := `{"name":"alice","created":"2026-01-02T03:04:05Z","ready":true,"ports":{"apiServer":6443},"processes":[{"name":"etcd","pid":999999999}]}`
	if err := os.WriteFile(filepath.Join(dir, "cluster.json"), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := cluster.NewProvider(cluster.ProviderWithEmbedded(t.TempDir(), data))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Clusters: p, Web: web.FS})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestClustersPage(t *testing.T) {
	ts := newTestServer(t)
	code, body := get(t, ts.URL+"/")
	if code != http.StatusOK {
		t.Fatalf("GET /: got %d, want 200", code)
	}
	for _, want := range []string{"<td>alice</td>", `class="state-stopped"`, "https://127.0.0.1:6443", "embedded"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	code, body = get(t, ts.URL+"/api/clusters")
	var list []cluster.Status
	if code != http.StatusOK || json.Unmarshal([]byte(body), &list) != nil {
		t.Fatalf("GET /api/clusters: %d %s", code, body)
	}
	if len(list) != 1 || list[0].Name != "alice" || list[0].State != cluster.StateStopped {
		t.Errorf("api: got %+v, want alice stopped", list)
	}
	if code, body := get(t, ts.URL+"/healthz"); code != http.StatusOK || body != "ok" {
		t.Errorf("healthz: %d %q", code, body)
	}
	if code, _ := get(t, ts.URL+"/static/oplab.css"); code != http.StatusOK {
		t.Errorf("static css: got %d", code)
	}
}

func TestEmptyPageAndBadTemplates(t *testing.T) {
	p, err := cluster.NewProvider(cluster.ProviderWithEmbedded(t.TempDir(), t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Clusters: p, Web: web.FS})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if !strings.Contains(rec.Body.String(), `id="empty"`) {
		t.Errorf("empty list page lacks the hint:\n%s", rec.Body.String())
	}
	broken := fstest.MapFS{"templates/x.html": {Data: []byte("{{ if }")}, "static/a.css": {Data: nil}}
	if _, err := New(Config{Clusters: p, Web: broken}); err == nil || !strings.Contains(err.Error(), "parse templates") {
		t.Errorf("broken template: got %v, want a parse error", err)
	}
}
