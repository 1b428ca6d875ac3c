package webapp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/web"
)

// BenchmarkLabPage measures the server's time to serve the failover lab's
// page (the real course, a real store) to a signed-in learner: p50 and p95
// over 200 requests per iteration. Run it with -benchtime 1x -count N.
func BenchmarkLabPage(b *testing.B) {
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DataDir: b.TempDir(), BinDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	s, closeServer, err := NewServer(ctx, a, ServerConfig{Web: web.FS, DataDir: b.TempDir(), Hosts: []string{"127.0.0.1:8080"}})
	if err != nil {
		b.Fatal(err)
	}
	defer closeServer()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", s.SignInURL("http://127.0.0.1:8080"), nil))
	cookies := rec.Result().Cookies()
	if len(cookies) == 0 {
		b.Fatal("sign-in set no cookie")
	}
	get := func() time.Duration {
		req := httptest.NewRequest("GET", "http://127.0.0.1:8080/labs/failover", nil)
		req.AddCookie(cookies[0])
		w := httptest.NewRecorder()
		start := time.Now()
		s.ServeHTTP(w, req)
		d := time.Since(start)
		if w.Code != http.StatusOK {
			b.Fatalf("GET /labs/failover: got %d", w.Code)
		}
		return d
	}
	get() // the first request renders the lesson, later ones reuse it
	b.ResetTimer()
	var all []time.Duration
	for b.Loop() {
		for range 200 {
			all = append(all, get())
		}
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*95/100].Microseconds())/1000, "p95-ms")
}
