package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/session"
)

// TestServeSurvivesKill9: `oplab serve` killed with SIGKILL in the middle
// of a lab, then started again on the same data directory and port: the
// learner's cookie still signs them in; the session, its results and its
// timeline are there; its cluster, which outlived the server, is adopted
// and the lab goes on to its end; the log stream answers a client resuming
// from its last frame. Killed again half-way through a start, the next
// server fails that start with the reason and removes its cluster: nothing
// is left behind and no cluster is made twice.
func TestServeSurvivesKill9(t *testing.T) {
	bin := clustertest.BinDir(t)
	data := t.TempDir()
	addr := freeAddr(t)
	jar, _ := cookiejar.New(nil)
	c := &client{t: t, http: &http.Client{Jar: jar}, base: "http://" + addr}

	srv := startServe(t, bin, data, addr)
	c.signIn(srv.signIn)
	var st struct {
		ID, State, ExerciseID string
		Exercise              int
	}
	c.post("/api/labs/failover/start", nil, &st)
	if st.State != "ready" {
		t.Fatalf("start: got %+v, want ready", st)
	}
	c.post("/api/sessions/"+st.ID+"/chaos", map[string]string{"exercise": st.ExerciseID}, &st)
	c.checkUntilPassed(st.ID)
	epoch, last := c.lastLogFrame(st.ID)
	before := c.get("/api/sessions/" + st.ID + "/timeline")
	srv.kill()

	// The cluster outlived the server.
	p, err := cluster.NewProvider(cluster.ProviderWithEmbedded(bin, data))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Whatever a failure left (cleanups run after the servers stop).
		list, _ := p.List(context.Background())
		for _, cl := range list {
			_ = p.Delete(context.Background(), cl.Name)
		}
	})
	if list, err := p.List(context.Background()); err != nil || len(list) != 1 || list[0].State != cluster.StateRunning {
		t.Fatalf("clusters after the kill: got %+v, %v; want the session's one, running", list, err)
	}

	srv = startServe(t, bin, data, addr)
	var again struct {
		State    string
		Exercise int
		Results  []struct {
			Item   string
			Passed bool
		}
		ClusterLive bool
	}
	c.getJSON("/api/sessions/"+st.ID, &again) // the old cookie
	if again.Exercise != 1 || !again.ClusterLive || len(again.Results) != 1 || !again.Results[0].Passed {
		t.Errorf("the session after the restart: got %+v, want at exercise 2 with its cluster and the first result", again)
	}
	if after := c.get("/api/sessions/" + st.ID + "/timeline"); !strings.HasPrefix(after, strings.TrimSuffix(before, "]")) {
		t.Errorf("the timeline after the restart does not begin with the one before:\nbefore %.400s\nafter  %.400s", before, after)
	}
	if f := c.resumeLog(st.ID, epoch, last); f.Type != "data" {
		t.Errorf("log stream resumed from %s/%d: got %+v, want its frames again", epoch, last, f)
	}
	c.post("/api/sessions/"+st.ID+"/chaos", map[string]string{"exercise": "force-delete"}, nil)
	c.checkUntilPassed(st.ID)
	c.getJSON("/api/sessions/"+st.ID, &again)
	if again.State != "completed" || len(again.Results) != 2 {
		t.Errorf("the lab after the restart: got %+v, want completed with two results", again)
	}

	// Killed while a start is under way.
	answered := make(chan string, 1)
	go func() {
		// No answer should come: the server dies first.
		req, _ := http.NewRequest("POST", c.base+"/api/labs/rbac/start", strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-CSRF-Token", c.csrf)
		resp, err := c.http.Do(req)
		if err != nil {
			return // the server died: as it should
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered <- fmt.Sprintf("%d %s", resp.StatusCode, b)
	}()
	clusters := filepath.Join(data, "clusters")
	waitUntil(t, time.Minute, "the second start to create its cluster", func() bool {
		select {
		case a := <-answered:
			t.Fatalf("the second start answered before its cluster was made: %s", a)
		default:
		}
		entries, _ := os.ReadDir(clusters)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "rbac-") {
				return true
			}
		}
		return false
	})
	srv.kill()
	srv = startServe(t, bin, data, addr)
	// The store as the CLI sees it, beside the running server.
	a, err := app.Open(context.Background(), app.Config{DataDir: data, BinDir: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sessions, err := a.SessionList(context.Background(), app.LocalLearner)
	if err != nil {
		t.Fatal(err)
	}
	var rbac []string
	for _, s := range sessions {
		if s.Lab == "rbac" {
			rbac = append(rbac, s.ID)
			if got, _ := a.Status(context.Background(), s.ID); got == nil || got.State != session.Failed || !strings.Contains(got.Error, "stopped while starting") {
				t.Errorf("the start killed half-way: got %+v, want failed, saying it stopped while starting", got)
			}
		}
	}
	if len(rbac) != 1 {
		t.Errorf("rbac sessions: got %v, want the one killed start", rbac)
	}
	list, err := p.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range list {
		if strings.HasPrefix(cl.Name, "rbac-") {
			t.Errorf("the killed start's cluster %s is still there (%s)", cl.Name, cl.State)
		}
	}
	c.post("/api/sessions/"+st.ID+"/stop", nil, nil)
	srv.stop()
}

// serveProcess is an `oplab serve` child process.
type serveProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	signIn string
	done   chan struct{}
}

// startServe starts bin/oplab serve (make test builds it) on addr and
// waits for its sign-in link.
func startServe(t *testing.T, bin, data, addr string) *serveProcess {
	t.Helper()
	cmd := exec.Command(filepath.Join(bin, "oplab"), "serve", "--addr", addr, "--data-dir", data, "--bin-dir", bin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &serveProcess{t: t, cmd: cmd, done: make(chan struct{})}
	link := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := regexp.MustCompile(`Sign in: (\S+)`).FindStringSubmatch(sc.Text()); m != nil {
				link <- m[1]
			}
		}
	}()
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(s.stop)
	select {
	case s.signIn = <-link:
	case <-s.done:
		t.Fatalf("oplab serve ended before it served:\n%s", errOut.String())
	case <-time.After(time.Minute):
		t.Fatalf("no sign-in link from oplab serve within a minute:\n%s", errOut.String())
	}
	return s
}

// kill kills the server with SIGKILL: no clean-up of its own.
func (s *serveProcess) kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.done
}

// stop stops the server as Ctrl-C does.
func (s *serveProcess) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.t.Error("oplab serve did not stop within 30 s of an interrupt")
		s.kill()
	}
}

// freeAddr returns a loopback address with a port free now, for servers
// that must come back on the same one.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", limit, what)
		}
	}
}

// client is a signed-in browser, as far as the JSON API goes.
type client struct {
	t    *testing.T
	http *http.Client
	base string
	csrf string
}

func (c *client) signIn(link string) {
	c.t.Helper()
	page := c.get(strings.TrimPrefix(link, c.base))
	m := regexp.MustCompile(`name="csrf-token" content="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		c.t.Fatal("no CSRF token on the signed-in page")
	}
	c.csrf = m[1]
}

func (c *client) get(path string) string {
	c.t.Helper()
	resp, err := c.http.Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

func (c *client) getJSON(path string, v any) {
	c.t.Helper()
	if err := json.Unmarshal([]byte(c.get(path)), v); err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
}

// post posts body as JSON and decodes a 200 answer into v; any other
// answer fails the test.
func (c *client) post(path string, body, v any) {
	c.t.Helper()
	if code, b := c.tryPost(path, body); code != http.StatusOK {
		c.t.Fatalf("POST %s: %d %s", path, code, b)
	} else if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			c.t.Fatalf("POST %s: %v in %s", path, err, b)
		}
	}
}

func (c *client) tryPost(path string, body any) (int, []byte) {
	c.t.Helper()
	if body == nil {
		body = struct{}{}
	}
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.base+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", c.csrf)
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, rb
}

// checkUntilPassed presses Check until the current exercise passes.
func (c *client) checkUntilPassed(id string) {
	c.t.Helper()
	var res struct{ Passed bool }
	for deadline := time.Now().Add(time.Minute); !res.Passed; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			c.t.Fatalf("the checks of session %s did not pass within a minute", id)
		}
		c.post("/api/sessions/"+id+"/check", nil, &res)
	}
}

type frame struct {
	Seq   uint64          `json:"seq"`
	Type  string          `json:"type"`
	Epoch string          `json:"epoch"`
	Data  json.RawMessage `json:"data"`
}

// lastLogFrame reads the session's log stream until it is quiet and
// returns the epoch and number of its last frame.
func (c *client) lastLogFrame(id string) (string, uint64) {
	c.t.Helper()
	conn := c.dial(fmt.Sprintf("/api/sessions/%s/streams/log", id))
	defer conn.Close()
	var epoch string
	var last uint64
	for {
		_ = conn.SetReadDeadline(time.Now().Add(time.Second))
		var f frame
		if err := conn.ReadJSON(&f); err != nil {
			if last == 0 {
				c.t.Fatalf("no log frame: %v", err)
			}
			return epoch, last
		}
		if f.Epoch != "" {
			epoch = f.Epoch
		}
		if f.Type == "data" {
			last = f.Seq
		}
	}
}

// resumeLog subscribes to the log stream after frame last of epoch and
// returns the first frame after the hello.
func (c *client) resumeLog(id, epoch string, last uint64) frame {
	c.t.Helper()
	conn := c.dial(fmt.Sprintf("/api/sessions/%s/streams/log?epoch=%s&after=%d", id, epoch, last))
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	var hello, f frame
	if err := conn.ReadJSON(&hello); err != nil || hello.Type != "hello" {
		c.t.Fatalf("resume the log: got %+v, %v; want a hello", hello, err)
	}
	if hello.Epoch == epoch {
		c.t.Errorf("the restarted server's log stream kept epoch %s: a client would skip its frames", epoch)
	}
	if err := conn.ReadJSON(&f); err != nil {
		c.t.Fatalf("resume the log: %v", err)
	}
	return f
}

// dial opens a WebSocket on path as the signed-in browser.
func (c *client) dial(path string) *websocket.Conn {
	c.t.Helper()
	u, _ := url.Parse(c.base + path)
	h := http.Header{"Origin": {c.base}}
	for _, ck := range c.http.Jar.Cookies(u) {
		h.Add("Cookie", ck.Name+"="+ck.Value)
	}
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(c.base, "http")+path, h)
	if err != nil {
		if resp != nil {
			b, _ := io.ReadAll(resp.Body)
			c.t.Logf("dial %s: %d %s", path, resp.StatusCode, b)
		}
		c.t.Fatalf("dial %s: %v", path, err)
	}
	return conn
}
