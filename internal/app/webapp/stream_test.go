package webapp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/frame"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/stream"
	"oplab.dev/oplab/web"
)

// streamSite is the web server with its live streams on a hub of the
// test's upstreams, session "s1" the local learner's: a frame goes from
// the hub through relay and the server's stream handler and writer, as it
// does in `oplab serve`, without a cluster behind it.
type streamSite struct {
	srv    *server.Server
	url    string
	cookie string // the signed-in local learner's
}

// streamSignIns and streamLearning are the application as far as the
// stream route asks it: a sign-in that holds and a session of the local
// learner. Any other call panics (a nil interface): the route makes none.
type (
	streamSignIns  struct{ server.SignIns }
	streamLearning struct{ server.Learning }
)

func (streamSignIns) SignInLearner(_ context.Context, learner string) (*server.SignIn, error) {
	return &server.SignIn{ID: "si-1", Learner: learner}, nil
}

func (streamSignIns) SignedIn(_ context.Context, id string) (*server.SignIn, error) {
	return &server.SignIn{ID: id, Learner: app.LocalLearner}, nil
}

func (streamLearning) Session(_ context.Context, id string) (*server.SessionRef, error) {
	return &server.SessionRef{ID: id, Learner: app.LocalLearner, Lab: "failover", State: "ready", Active: true}, nil
}

// hubStreams subscribes on hub as Web.Subscribe does on the runtime's.
type hubStreams struct{ hub *stream.Hub }

func (h hubStreams) Subscribe(ctx context.Context, id, name string, from server.Resume) (<-chan frame.Frame, error) {
	sub, err := h.hub.Subscribe(name+"/"+id, fromResume(from))
	if err != nil {
		return nil, err
	}
	return relay(ctx, sub), nil
}

// newStreamSite serves hub's streams until the test ends.
func newStreamSite(tb testing.TB, hub *stream.Hub) *streamSite {
	tb.Helper()
	ts := httptest.NewUnstartedServer(nil)
	srv, err := server.New(server.Config{Learning: streamLearning{}, Classroom: struct{ server.Classroom }{}, SignIns: streamSignIns{}, Streams: hubStreams{hub}, Web: web.FS,
		DataDir: tb.TempDir(), Hosts: server.Hosts(ts.Listener.Addr().String()), Learner: app.LocalLearner})
	if err != nil {
		tb.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	tb.Cleanup(func() { ts.Close(); srv.Close() })
	s := &streamSite{srv: srv, url: ts.URL}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(srv.SignInURL(ts.URL))
	if err != nil {
		tb.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		s.cookie = c.Name + "=" + c.Value
	}
	if s.cookie == "" {
		tb.Fatalf("sign-in: got %d and no cookie", resp.StatusCode)
	}
	return s
}

// dial opens session s1's stream name, as the page does, with query q.
func (s *streamSite) dial(tb testing.TB, ctx context.Context, name string, q url.Values) *websocket.Conn {
	tb.Helper()
	u := "ws" + strings.TrimPrefix(s.url, "http") + "/api/sessions/s1/streams/" + name + "?" + q.Encode()
	h := http.Header{"Origin": {s.url}, "Cookie": {s.cookie}}
	c, resp, err := websocket.DefaultDialer.DialContext(ctx, u, h)
	if err != nil {
		code := 0
		if resp != nil {
			code = resp.StatusCode
		}
		tb.Fatalf("dial %s: %v (%d)", u, err, code)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// testSource is an upstream the test feeds: each message on msgs is
// emitted with its cursor.
type testSource struct{ msgs chan [2]string }

func (s testSource) Run(ctx context.Context, emit stream.Emit) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case m := <-s.msgs:
			emit([]byte(m[0]), m[1])
		}
	}
}

// TestStreamThroughServer: a stream's frames reach a client through the
// server as the bytes the hub made, and a client that comes back resumes
// after the last frame it saw on this server, or after its last cursor on
// another.
func TestStreamThroughServer(t *testing.T) {
	t.Parallel()
	src := testSource{msgs: make(chan [2]string)}
	hub := stream.New(func(string) (stream.Upstream, error) { return src, nil }, stream.Options{})
	t.Cleanup(hub.Close)
	site := newStreamSite(t, hub)

	read := func(c *websocket.Conn) string {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		return string(b)
	}
	c := site.dial(t, t.Context(), "log", nil)
	hello := read(c)
	epoch, ok := strings.CutPrefix(hello, `{"seq":0,"type":"hello","epoch":"`)
	if !ok || !strings.HasSuffix(epoch, `"}`) {
		t.Fatalf("first message: got %s, want a hello of seq 0", hello)
	}
	epoch = strings.TrimSuffix(epoch, `"}`)
	for i, m := range [][2]string{{`{"message":"one"}`, "c1"}, {`2`, "c2"}, {`"three"`, "c3"}} {
		src.msgs <- m
		want := `{"seq":` + strconv.Itoa(i+1) + `,"type":"data","cursor":"` + m[1] + `","data":` + m[0] + `}`
		if got := read(c); got != want {
			t.Errorf("frame %d: got %s, want %s", i+1, got, want)
		}
	}
	c.Close()
	src.msgs <- [2]string{`4`, "c4"}
	src.msgs <- [2]string{`5`, "c5"}

	again := site.dial(t, t.Context(), "log", url.Values{"epoch": {epoch}, "after": {"3"}})
	if got, want := read(again), `{"seq":5,"type":"hello","epoch":"`+epoch+`"}`; got != want {
		t.Errorf("hello on coming back: got %s, want %s", got, want)
	}
	for _, want := range []string{`{"seq":4,"type":"data","cursor":"c4","data":4}`, `{"seq":5,"type":"data","cursor":"c5","data":5}`} {
		if got := read(again); got != want {
			t.Errorf("after seq 3: got %s, want %s", got, want)
		}
	}

	// From another server: its epoch means nothing here, its cursor does.
	other := site.dial(t, t.Context(), "log", url.Values{"epoch": {"elsewhere"}, "after": {"40"}, "cursor": {"c4"}})
	if got, want := read(other), `{"seq":5,"type":"hello","epoch":"`+epoch+`","resumed":true}`; got != want {
		t.Errorf("hello from another server: got %s, want %s", got, want)
	}
	if got, want := read(other), `{"seq":5,"type":"data","cursor":"c5","data":5}`; got != want {
		t.Errorf("after cursor c4: got %s, want %s", got, want)
	}
}
