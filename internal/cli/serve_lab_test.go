package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/quiz"
)

// TestServeRunsTheFailoverLab plays the failover lab through the server's
// JSON API against a real cluster, as the page does: start, break, check
// until the cluster recovered, answer the quiz; and the CLI, on the same
// data directory, sees the same session.
func TestServeRunsTheFailoverLab(t *testing.T) {
	bin := labBinDir(t)
	data := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Streams{In: strings.NewReader(""), Out: &out, ErrOut: io.Discard},
			[]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", data, "--bin-dir", bin})
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
			t.Fatalf("no sign-in link; output:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	base := m[1][:strings.Index(m[1], "/login")]
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csrf := regexp.MustCompile(`name="csrf-token" content="([^"]+)"`).FindSubmatch(page)
	if csrf == nil {
		t.Fatal("no CSRF token on the signed-in page")
	}
	post := func(path string, body any, v any) int {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-CSRF-Token", string(csrf[1]))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		rb, _ := io.ReadAll(resp.Body)
		if v != nil && resp.StatusCode == http.StatusOK {
			if err := json.Unmarshal(rb, v); err != nil {
				t.Fatalf("POST %s: %v in %s", path, err, rb)
			}
		}
		if resp.StatusCode != http.StatusOK {
			t.Logf("POST %s: %d %s", path, resp.StatusCode, rb)
		}
		return resp.StatusCode
	}
	var st struct {
		ID, State, ExerciseID string
		Kubeconfig            string
	}
	if code := post("/api/labs/failover/start", struct{}{}, &st); code != http.StatusOK || st.State != "ready" {
		t.Fatalf("start: got %d %+v, want 200 and ready", code, st)
	}
	t.Cleanup(func() { post(fmt.Sprintf("/api/sessions/%s/stop", st.ID), struct{}{}, nil) })
	if st.Kubeconfig != "" {
		t.Error("the start's answer carries the kubeconfig")
	}
	// The console runs kubectl on the session's own cluster.
	if out := postText(c, base+"/api/sessions/"+st.ID+"/console", string(csrf[1]), map[string]string{"line": "kubectl get pods -L databases.example.com/role"}); !strings.Contains(out, "prod-db-0") || !strings.Contains(out, "ROLE") {
		t.Errorf("console: got %q, want the session's pods with their roles", out)
	}
	// The operator's log and the cluster view stream over WebSockets.
	for _, name := range []string{"log", "cluster"} {
		if f := firstDataFrame(t, base, "/api/sessions/"+st.ID+"/streams/"+name, jar); f == "" {
			t.Errorf("stream %s: no data frame", name)
		}
	}
	if code := post("/api/sessions/"+st.ID+"/chaos", map[string]string{"exercise": st.ExerciseID}, &st); code != http.StatusOK || st.State != "in-exercise" {
		t.Fatalf("chaos: got %d %+v", code, st)
	}
	var res struct {
		Passed     bool
		RecoveryMs int64
	}
	for deadline := time.Now().Add(60 * time.Second); !res.Passed; {
		if time.Now().After(deadline) {
			t.Fatal("the checks did not pass within a minute of the chaos")
		}
		post("/api/sessions/"+st.ID+"/check", struct{}{}, &res)
	}
	if res.RecoveryMs <= 0 {
		t.Errorf("check passed with recovery %d, want a time to recovery", res.RecoveryMs)
	}
	// Every question must be answered: the choice questions rightly, the
	// cluster questions with a wrong name.
	fq, errs := quiz.Load(course.Embedded().Quizzes, "failover")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	answers := map[string][]string{}
	want := 0
	for _, qq := range fq.Questions {
		if qq.Type == quiz.Cluster {
			answers[qq.ID] = []string{"pod/nobody"}
			continue
		}
		want++
		for _, c := range qq.Choices {
			if c.Correct {
				answers[qq.ID] = append(answers[qq.ID], c.ID)
			}
		}
	}
	var q struct{ Correct, Total int }
	if code := post("/api/sessions/"+st.ID+"/quiz", map[string]any{"answers": answers}, &q); code != http.StatusOK || q.Correct != want || q.Total != len(fq.Questions) {
		t.Errorf("quiz: got %d %+v, want %d of %d correct (the choice questions)", code, q, want, len(fq.Questions))
	}
	// The CLI sees the session the browser started.
	stdout, _, err := run(t, "lab", "status", "-o", "json", "--data-dir", data, "--bin-dir", bin)
	if err != nil || !strings.Contains(stdout, st.ID) {
		t.Errorf("oplab lab status: got %v\n%s, want session %s", err, stdout, st.ID)
	}
}

// postText posts body as JSON and returns the answer's text.
func postText(c *http.Client, url, csrf string, body any) string {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", csrf)
	resp, err := c.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	return string(rb)
}

// firstDataFrame opens a stream's WebSocket as the signed-in browser and
// returns the first data frame's data, or "" when none came in a minute.
func firstDataFrame(t *testing.T, base, path string, jar http.CookieJar) string {
	t.Helper()
	u, _ := url.Parse(base + path)
	h := http.Header{"Origin": {base}}
	for _, ck := range jar.Cookies(u) {
		h.Add("Cookie", ck.Name+"="+ck.Value)
	}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+path, h)
	if err != nil {
		if resp != nil {
			b, _ := io.ReadAll(resp.Body)
			t.Logf("dial %s: %d %s", path, resp.StatusCode, b)
		}
		t.Errorf("dial %s: %v", path, err)
		return ""
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	for {
		var f struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := conn.ReadJSON(&f); err != nil {
			t.Logf("read %s: %v", path, err)
			return ""
		}
		if f.Type == "data" && len(f.Data) > 0 {
			return string(f.Data)
		}
	}
}
