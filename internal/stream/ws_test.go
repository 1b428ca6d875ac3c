package stream

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsServer serves key "k" of a hub over WebSocket; each Serve's error goes
// to the returned channel.
func wsServer(t *testing.T, h *Hub, o WSOptions) (url string, served <-chan error) {
	t.Helper()
	errs := make(chan error, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from := From{Epoch: r.URL.Query().Get("epoch")}
		from.Seq, _ = strconv.ParseUint(r.URL.Query().Get("after"), 10, 64)
		sub, err := h.Subscribe("k", from)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		conn, err := NewUpgrader().Upgrade(w, r, nil)
		if err != nil {
			sub.Close()
			return
		}
		errs <- Serve(r.Context(), conn, sub, o)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), errs
}

func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.DefaultDialer.DialContext(t.Context(), url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func readFrame(t *testing.T, c *websocket.Conn) Frame {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, b, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("read frame: %v", err)
	}
	var f Frame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("frame %s: %v", b, err)
	}
	return f
}

func TestServe(t *testing.T) {
	t.Parallel()
	src := newSource()
	h := newHub(t, src, Options{})
	url, served := wsServer(t, h, WSOptions{})
	c := dial(t, url)
	hello := readFrame(t, c)
	if hello.Type != TypeHello || hello.Epoch == "" {
		t.Fatalf("got %+v, want a hello", hello)
	}
	src.send(t, 1, 3)
	for i := 1; i <= 3; i++ {
		if f := readFrame(t, c); f.Type != TypeData || f.Seq != uint64(i) || string(f.Data) != strconv.Itoa(i) {
			t.Fatalf("got %+v, want data %d", f, i)
		}
	}
	c.Close()
	// A reconnect resumes after the last frame seen.
	src.send(t, 4, 5)
	c2 := dial(t, url+"?epoch="+hello.Epoch+"&after=3")
	readFrame(t, c2)
	for i := 4; i <= 5; i++ {
		if f := readFrame(t, c2); f.Seq != uint64(i) {
			t.Fatalf("after resume: got %+v, want seq %d", f, i)
		}
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("first connection's Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("Serve did not return after the client closed")
	}
}

// TestServePongDeadline keeps a client that answers pings and drops one
// that does not.
func TestServePongDeadline(t *testing.T) {
	t.Parallel()
	src := newSource()
	h := newHub(t, src, Options{})
	url, served := wsServer(t, h, WSOptions{PongWait: 600 * time.Millisecond})
	good := dial(t, url)
	mute := dial(t, url)
	mute.SetPingHandler(func(string) error { return nil }) // reads, never answers

	goodErr := make(chan error, 1)
	go func() {
		for {
			if _, _, err := good.ReadMessage(); err != nil {
				goodErr <- err
				return
			}
		}
	}()
	_ = mute.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	var err error
	for err == nil {
		_, _, err = mute.ReadMessage()
	}
	if !websocket.IsUnexpectedCloseError(err) && !strings.Contains(err.Error(), "close") && !strings.Contains(err.Error(), "EOF") {
		t.Errorf("mute client: got %v, want its connection closed", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("mute client dropped after %s, want about the pong wait", took)
	}
	if err := <-served; err == nil || !strings.Contains(err.Error(), "no pong") {
		t.Errorf("mute client's Serve: got %v, want an error saying it sent no pong", err)
	}
	// The client that answers pings is still served, several pong waits on.
	time.Sleep(time.Second)
	select {
	case err := <-goodErr:
		t.Fatalf("answering client dropped: %v", err)
	default:
	}
	src.send(t, 1, 1)
	select {
	case err := <-goodErr:
		t.Fatalf("answering client dropped: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestServeDropsClientThatStopsReading: a client that stops reading is
// dropped (its writes time out or it falls behind) while another goes on.
func TestServeDropsClientThatStopsReading(t *testing.T) {
	t.Parallel()
	src := newSource()
	// Room in the ring for all its 64 frames of 64 KiB: the reading client
	// is never more than the ring behind.
	h := newHub(t, src, Options{Ring: 64, RingBytes: 64 * 256 << 10, MaxLag: 32})
	url, served := wsServer(t, h, WSOptions{WriteWait: 500 * time.Millisecond})
	stuck := dial(t, url)
	reader := dial(t, url)
	readFrame(t, reader)
	waitFor(t, src.started, "the upstream")

	const frames = 400
	big := `"` + strings.Repeat("x", 64*1024) + `"`
	read := make(chan int, 1)
	var got atomic.Int64
	go func() {
		n := 0
		for n < frames {
			_ = reader.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, _, err := reader.ReadMessage(); err != nil {
				break
			}
			n++
			got.Store(int64(n))
		}
		read <- n
	}()
	src.mu.Lock()
	emit := src.emit
	src.mu.Unlock()
	for i := range frames {
		// A pace the reading client keeps up with however loaded the
		// machine: never more than half of MaxLag ahead of it.
		for deadline := time.Now().Add(10 * time.Second); int64(i)-got.Load() > 16 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		emit([]byte(big), "")
	}
	select {
	case err := <-served:
		if err == nil {
			t.Error("the stuck client's Serve returned no error, want a write timeout or ErrSlow")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the client that stopped reading was not dropped")
	}
	if n := <-read; n != frames {
		t.Errorf("the reading client got %d frames, want %d", n, frames)
	}
	_ = stuck
}

func TestCheckOrigin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		host, origin string
		want         bool
	}{
		{"127.0.0.1:8080", "", true},
		{"127.0.0.1:8080", "http://127.0.0.1:8080", true},
		{"LAB.example:8080", "https://lab.example:8080", true},
		{"127.0.0.1:8080", "http://127.0.0.1:9090", false},
		{"127.0.0.1:8080", "http://evil.example", false},
		{"127.0.0.1:8080", "null", false},
		{"127.0.0.1:8080", "::not a url", false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "http://"+tt.host+"/ws", nil)
		r.Host = tt.host
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		if got := CheckOrigin(r); got != tt.want {
			t.Errorf("Host %s, Origin %q: got %v, want %v", tt.host, tt.origin, got, tt.want)
		}
	}
}
