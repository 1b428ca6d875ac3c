package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
)

// How the server holds a WebSocket's client to account, unless a test
// says otherwise (Server.ws).
const (
	// wsWriteWait bounds each write: a client that stops reading is
	// dropped after it.
	wsWriteWait = 10 * time.Second
	// wsPongWait is how long a client may stay silent, pongs included,
	// before it is taken for gone.
	wsPongWait = 60 * time.Second
	// wsQueue is how many values of a producer (serveJSON) may wait for a
	// slow client; the producer waits beyond it, not the others.
	wsQueue = 256
	// wsReadLimit bounds what a client may send: nothing is expected but
	// control frames.
	wsReadLimit = 4096
)

// wsTimes are a connection's write and pong waits (wsWriteWait,
// wsPongWait).
type wsTimes struct {
	write, pong time.Duration
}

// upgrader accepts a WebSocket only from a page of this server: the
// Origin's host must be the request's Host (which hostCheck has checked).
// The server does not compress: a frame's bytes, made once for all its
// clients, go out as they are.
var upgrader = websocket.Upgrader{
	ReadBufferSize:  1024,
	WriteBufferSize: 4096,
	CheckOrigin:     func(r *http.Request) bool { return r.Header.Get("Origin") != "" && sameOrigin(r) },
}

// serveWS upgrades the request and writes each message of msgs, as encode
// makes it, in a text message, until msgs closes (a normal close), ctx
// ends (going away), or the client leaves or is dropped. The calling
// goroutine is the connection's one writer; a reader goroutine, which it
// waits for, only sees pongs and the client's close.
//
// encode returns bytes a live stream's frame already holds
// (frame.Frame.MarshalJSON): its JSON is made once when the frame is
// published, and each connection writes those bytes. gorilla's
// PreparedMessage would also keep the WebSocket header made once, but it
// keeps a second copy of each frame, and saves only a copy into the
// connection's buffer: the server does not compress.
//
// The error says why a client was dropped (no pong, a write that failed or
// timed out); nil when it left, msgs closed or ctx ended.
func serveWS[T any](ctx context.Context, w http.ResponseWriter, r *http.Request, t wsTimes, msgs <-chan T, encode func(T) ([]byte, error)) error {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return fmt.Errorf("websocket upgrade: %w", err) // the upgrader has answered the client
	}
	readDone := make(chan struct{})
	var readErr error
	go func() {
		defer close(readDone)
		readErr = readWS(conn, t.pong)
	}()
	err = writeWS(ctx, conn, t, msgs, encode, readDone)
	conn.Close() // ends the reader's ReadMessage at once
	<-readDone
	switch {
	case errors.Is(err, errClientDone):
		var ne net.Error
		if errors.As(readErr, &ne) && ne.Timeout() {
			return fmt.Errorf("websocket client silent for %s (no pong): dropped", t.pong)
		}
		return nil // the client left
	case gone(err):
		return nil // the client left while we wrote
	case err != nil:
		return fmt.Errorf("websocket write: %w", err)
	}
	return nil
}

// errClientDone: the reader ended, the client left or went silent.
var errClientDone = errors.New("client done")

// readWS discards what the client sends until the connection fails or the
// client has been silent (no pong) for pongWait.
func readWS(conn *websocket.Conn, pongWait time.Duration) error {
	conn.SetReadLimit(wsReadLimit)
	_ = conn.SetReadDeadline(time.Now().Add(pongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(pongWait)) })
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			return err
		}
	}
}

func writeWS[T any](ctx context.Context, conn *websocket.Conn, t wsTimes, msgs <-chan T, encode func(T) ([]byte, error), readDone <-chan struct{}) error {
	// Pings go twice per pong wait, so that a pong delayed by a busy
	// machine still comes in time.
	ping := time.NewTicker(t.pong / 2)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			closeWS(conn, websocket.CloseGoingAway, t.write)
			return nil
		case <-readDone:
			return errClientDone
		case m, ok := <-msgs:
			if !ok {
				closeWS(conn, websocket.CloseNormalClosure, t.write)
				return nil
			}
			b, err := encode(m)
			if err != nil {
				closeWS(conn, websocket.CloseInternalServerErr, t.write)
				return fmt.Errorf("encode %T: %w", m, err)
			}
			_ = conn.SetWriteDeadline(time.Now().Add(t.write))
			if err := conn.WriteMessage(websocket.TextMessage, b); err != nil {
				return err
			}
		case <-ping.C:
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(t.write)); err != nil {
				return err
			}
		}
	}
}

func closeWS(conn *websocket.Conn, code int, wait time.Duration) {
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, ""), time.Now().Add(wait))
}

// gone reports whether a write failed because the client closed the
// connection, as opposed to a client that stopped reading (a timeout).
func gone(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, websocket.ErrCloseSent)
}

// wsEnded logs why the WebSocket of r dropped its client, if it did.
func (s *Server) wsEnded(r *http.Request, err error) {
	if err != nil {
		s.log.Debug("websocket ended", "path", r.URL.Path, "err", err)
	}
}

// serveJSON serves each value produce sends as JSON (serveWS). produce
// runs in a goroutine of its own until it returns (the connection then
// closes normally) or ctx ends, which the connection's end brings about;
// serveJSON waits for it.
func serveJSON(ctx context.Context, w http.ResponseWriter, r *http.Request, t wsTimes, produce func(ctx context.Context, out chan<- any)) error {
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan any, wsQueue)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(out)
		produce(ctx, out)
	})
	defer wg.Wait()
	defer cancel()
	return serveWS(ctx, w, r, t, out, func(v any) ([]byte, error) { return json.Marshal(v) })
}

// send puts v on out unless ctx ended; it reports whether it did.
func send(ctx context.Context, out chan<- any, v any) bool {
	select {
	case out <- v:
		return true
	case <-ctx.Done():
		return false
	}
}
