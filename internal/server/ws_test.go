package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"oplab.dev/oplab/internal/frame"
)

// wsTestServer serves each connection through serveWS with times, writing
// the frames of the next channel of feeds until ctx ends; each serveWS's
// error goes to served.
func wsTestServer(t *testing.T, ctx context.Context, times wsTimes, feeds <-chan chan frame.Frame) (url string, served <-chan error) {
	t.Helper()
	errs := make(chan error, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		errs <- serveWS(ctx, w, r, times, <-feeds, frame.Frame.MarshalJSON)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), errs
}

// dialTestWS dials url as a page of its server would (its Origin).
func dialTestWS(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	h := http.Header{"Origin": {"http" + strings.TrimPrefix(url, "ws")}}
	c, _, err := websocket.DefaultDialer.DialContext(t.Context(), url, h)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// feed is one connection's frames.
func feed(feeds chan chan frame.Frame) chan frame.Frame {
	ch := make(chan frame.Frame)
	feeds <- ch
	return ch
}

// TestServeWSWritesFramesAsMade: each frame goes out as the bytes its
// MarshalJSON returns (a data frame's made once, when it was published),
// and the end of the frames closes the connection normally.
func TestServeWSWritesFramesAsMade(t *testing.T) {
	t.Parallel()
	feeds := make(chan chan frame.Frame, 1)
	url, served := wsTestServer(t, t.Context(), wsTimes{write: time.Second, pong: time.Minute}, feeds)
	frames := feed(feeds)
	c := dialTestWS(t, url)
	sent := []frame.Frame{
		{Type: frame.TypeHello, Epoch: "e1", Seq: 2},
		frame.Data(3, "0003", json.RawMessage(`{"message":"reconciled"}`)),
		{Type: frame.TypeGap, Seq: 9, Skipped: 5},
	}
	go func() {
		for _, f := range sent {
			frames <- f
		}
		close(frames)
	}()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for _, f := range sent {
		want, _ := f.MarshalJSON()
		typ, got, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("read %s: %v", want, err)
		}
		if typ != websocket.TextMessage || string(got) != string(want) {
			t.Errorf("got message %d %s, want text %s", typ, got, want)
		}
	}
	if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Errorf("after the last frame: got %v, want a normal close", err)
	}
	if err := <-served; err != nil {
		t.Errorf("serveWS: got %v, want nil (the frames ended)", err)
	}
}

// TestServeWSGoesAwayWithTheServer: the end of ctx (the server closing)
// closes the connection as going away, which api.js reconnects after.
func TestServeWSGoesAwayWithTheServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	feeds := make(chan chan frame.Frame, 1)
	url, served := wsTestServer(t, ctx, wsTimes{write: time.Second, pong: time.Minute}, feeds)
	feed(feeds)
	c := dialTestWS(t, url)
	cancel()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Errorf("after the server's end: got %v, want going away", err)
	}
	if err := <-served; err != nil {
		t.Errorf("serveWS: got %v, want nil", err)
	}
}

// TestServeWSPongDeadline keeps a client that answers pings and drops one
// that does not, after about the pong wait. The wait is long enough that a
// loaded machine still delivers the answering client's pongs in time.
func TestServeWSPongDeadline(t *testing.T) {
	t.Parallel()
	const pong = 2 * time.Second
	feeds := make(chan chan frame.Frame, 2)
	url, served := wsTestServer(t, t.Context(), wsTimes{write: time.Second, pong: pong}, feeds)
	goodFrames := feed(feeds)
	good := dialTestWS(t, url)
	feed(feeds)
	mute := dialTestWS(t, url)
	mute.SetPingHandler(func(string) error { return nil }) // reads, never answers

	goodMsgs := make(chan error, 8)
	go func() {
		for {
			_, _, err := good.ReadMessage()
			goodMsgs <- err
			if err != nil {
				return
			}
		}
	}()
	_ = mute.SetReadDeadline(time.Now().Add(5 * pong))
	start := time.Now()
	var err error
	for err == nil {
		_, _, err = mute.ReadMessage()
	}
	var ne interface{ Timeout() bool }
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("mute client: its read timed out (%v), want its connection closed by the server", err)
	}
	if took := time.Since(start); took > 3*pong {
		t.Errorf("mute client dropped after %s, want about the pong wait (%s)", took, pong)
	}
	if err := <-served; err == nil || !strings.Contains(err.Error(), "no pong") {
		t.Errorf("mute client's serveWS: got %v, want an error saying it sent no pong", err)
	}
	// The client that answers pings is still served, pong waits on.
	select {
	case err := <-served:
		t.Fatalf("answering client's serveWS returned %v, want it to go on", err)
	case err := <-goodMsgs:
		t.Fatalf("answering client: got %v before any frame, want nothing", err)
	case <-time.After(2 * pong):
	}
	goodFrames <- frame.Data(1, "", json.RawMessage(`1`))
	select {
	case err := <-goodMsgs:
		if err != nil {
			t.Fatalf("answering client dropped: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("answering client: no frame after 5s")
	}
}

// TestServeWSDropsClientThatStopsReading: a client that stops reading is
// dropped once a write has waited the write wait, while another client
// gets every frame.
func TestServeWSDropsClientThatStopsReading(t *testing.T) {
	t.Parallel()
	feeds := make(chan chan frame.Frame, 2)
	url, served := wsTestServer(t, t.Context(), wsTimes{write: 500 * time.Millisecond, pong: time.Minute}, feeds)
	stuckFrames := feed(feeds)
	dialTestWS(t, url) // never reads
	readerFrames := feed(feeds)
	reader := dialTestWS(t, url)

	const frames = 400
	big := frame.Data(1, "", json.RawMessage(`"`+strings.Repeat("x", 64*1024)+`"`))
	// The stuck client's feed goes on until its writer gives up: far more
	// than the loopback's buffers hold.
	stuckDone := make(chan struct{})
	go func() {
		for {
			select {
			case stuckFrames <- big:
			case <-stuckDone:
				return
			}
		}
	}()
	defer close(stuckDone)
	var got atomic.Int64
	read := make(chan int64, 1)
	go func() {
		for got.Load() < frames {
			_ = reader.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, _, err := reader.ReadMessage(); err != nil {
				break
			}
			got.Add(1)
		}
		read <- got.Load()
	}()
	go func() {
		for range frames {
			readerFrames <- big
		}
	}()
	select {
	case err := <-served:
		if err == nil || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("the stuck client's serveWS: got %v, want a write that timed out", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the client that stopped reading was not dropped")
	}
	if n := <-read; n != frames {
		t.Errorf("the reading client got %d frames, want %d", n, frames)
	}
}
