package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeSignInAndCatalogue runs `oplab serve` as a user would, signs in
// with the printed link and reads the catalogue and a lab page built from
// the real course.
func TestServeSignInAndCatalogue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Streams{In: strings.NewReader(""), Out: &out, ErrOut: io.Discard},
			[]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--bin-dir", t.TempDir()})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	link := regexp.MustCompile(`Sign in: (http://127\.0\.0\.1:\d+/login\?token=\S+)`)
	var m []string
	for deadline := time.Now().Add(20 * time.Second); m == nil; m = link.FindStringSubmatch(out.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no sign-in link printed; output:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	base := m[1][:strings.Index(m[1], "/login")]
	if hint := "Instructors sign in at " + base + "/instructor/login"; !strings.Contains(out.String(), hint) {
		t.Errorf("serve's output has no %q:\n%s", hint, out.String())
	}
	if resp, err := http.Get(base + "/instructor/login"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /instructor/login: got %v %v, want 200", resp, err)
	}
	if resp, err := http.Get(base + "/"); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET / before signing in: got %v %v, want 401", resp.StatusCode, err)
	}
	if resp, err := http.Get(base + "/metrics"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /metrics: got %v %v, want 200", resp, err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(b), "go_goroutines") {
			t.Errorf("/metrics is not the registry:\n%.500s", b)
		}
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(path string) string {
		t.Helper()
		resp, err := c.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: got %d, want 200:\n%s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	page := get(m[1])
	for _, want := range []string{`href="/labs/failover"`, "Failover: lose the primary", "Not started"} {
		if !strings.Contains(page, want) {
			t.Errorf("catalogue lacks %q", want)
		}
	}
	var labs []struct{ ID string }
	if err := json.Unmarshal([]byte(get(base+"/api/labs")), &labs); err != nil || len(labs) < 2 {
		t.Errorf("/api/labs: got %v %v, want the course's labs", labs, err)
	}
	req, _ := http.NewRequest("GET", base+"/labs/failover", nil)
	req.Header.Set("Accept-Language", "ko-KR,ko;q=0.9")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"페일오버: 프라이머리 잃기", `class="console-run"`, "프라이머리 삭제", `data-exercise="delete-primary"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("Korean lab page lacks %q", want)
		}
	}
}
