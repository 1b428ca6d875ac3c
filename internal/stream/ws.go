package stream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
)

// Close codes Serve ends a connection with, besides the standard ones.
const (
	// CloseSlow: the client read too slowly and was dropped; it may
	// reconnect from the last frame it saw.
	CloseSlow = 4001
	// CloseEnded: the stream's upstream ended (the cluster went away).
	CloseEnded = 4002
)

// WSOptions tune Serve; zero fields take the defaults.
type WSOptions struct {
	// WriteWait bounds each write: a client that stops reading is dropped
	// after it (10 s).
	WriteWait time.Duration
	// PongWait is how long the client may stay silent, pongs included,
	// before it is taken for gone (60 s); pings go twice as often.
	PongWait time.Duration
}

func (o WSOptions) withDefaults() WSOptions {
	if o.WriteWait <= 0 {
		o.WriteWait = 10 * time.Second
	}
	if o.PongWait <= 0 {
		o.PongWait = 60 * time.Second
	}
	return o
}

// maxClientMessage bounds what a client may send: nothing is expected but
// control frames.
const maxClientMessage = 1024

// Serve sends sub's frames to conn as JSON text messages until ctx ends, the
// subscription ends, or the client goes away; it closes conn and sub. Its
// goroutine is the connection's one writer; a reader goroutine it starts
// and waits for answers pings and notices the client's close.
func Serve(ctx context.Context, conn *websocket.Conn, sub *Subscription, o WSOptions) error {
	o = o.withDefaults()
	defer sub.Close()
	readDone := make(chan struct{})
	var readErr error
	go func() {
		defer close(readDone)
		readErr = read(conn, o.PongWait)
	}()
	err := write(ctx, conn, sub, readDone, o)
	// Closing the connection ends the reader's ReadMessage at once.
	conn.Close()
	<-readDone
	if errors.Is(err, errClientDone) {
		var ne net.Error
		if errors.As(readErr, &ne) && ne.Timeout() {
			return fmt.Errorf("client silent for %s (no pong): dropped", o.PongWait)
		}
		return nil // the client left
	}
	if gone(err) {
		return nil // the client left: nothing went wrong here
	}
	return err
}

// errClientDone: the reader ended, the client left or went silent.
var errClientDone = errors.New("client done")

// read discards what the client sends until the connection fails or the
// client has been silent (no pong) for pongWait.
func read(conn *websocket.Conn, pongWait time.Duration) error {
	conn.SetReadLimit(maxClientMessage)
	_ = conn.SetReadDeadline(time.Now().Add(pongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(pongWait)) })
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			return err
		}
	}
}

func write(ctx context.Context, conn *websocket.Conn, sub *Subscription, readDone <-chan struct{}, o WSOptions) error {
	// Pings go twice per PongWait, so a pong delayed by a busy machine
	// still arrives in time.
	ping := time.NewTicker(o.PongWait / 2)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			closeWith(conn, websocket.CloseGoingAway, "server closing", o.WriteWait)
			return nil
		case <-readDone:
			return errClientDone
		case <-sub.Done():
			return finish(conn, sub.Err(), o.WriteWait)
		case <-ping.C:
			_ = conn.SetWriteDeadline(time.Now().Add(o.WriteWait))
			if err := conn.WriteMessage(websocket.PingMessage, nil); err != nil {
				return err
			}
		case <-sub.Ready():
			// Send all that is ready before looking at the ticker again.
			for {
				f, ok, err := sub.TryNext()
				if err != nil {
					return finish(conn, err, o.WriteWait)
				}
				if !ok {
					break
				}
				b, _ := f.MarshalJSON()
				_ = conn.SetWriteDeadline(time.Now().Add(o.WriteWait))
				if err := conn.WriteMessage(websocket.TextMessage, b); err != nil {
					return err
				}
			}
		}
	}
}

// finish closes conn with the code that tells the client why sub ended.
func finish(conn *websocket.Conn, err error, wait time.Duration) error {
	switch {
	case errors.Is(err, ErrSlow):
		closeWith(conn, CloseSlow, "too slow: reconnect from the last frame seen", wait)
		return err
	case errors.Is(err, ErrClosed):
		closeWith(conn, websocket.CloseGoingAway, "stream closed", wait)
		return nil
	case errors.Is(err, ErrEnded):
		closeWith(conn, CloseEnded, "stream ended", wait)
		return nil
	}
	closeWith(conn, CloseEnded, "stream failed", wait)
	return err
}

func closeWith(conn *websocket.Conn, code int, text string, wait time.Duration) {
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(wait))
}

// CheckOrigin allows a request without an Origin (not from a browser) or
// whose Origin's host is the request's Host: a page of this server. Use it
// as websocket.Upgrader.CheckOrigin; the server's Host check (against DNS
// rebinding) is the caller's.
func CheckOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// NewUpgrader returns an Upgrader with CheckOrigin.
func NewUpgrader() *websocket.Upgrader {
	return &websocket.Upgrader{ReadBufferSize: 1024, WriteBufferSize: 16 * 1024, CheckOrigin: CheckOrigin}
}

// gone reports whether a write failed because the client closed the
// connection, as opposed to a client that stopped reading (a timeout).
func gone(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, websocket.ErrCloseSent)
}
