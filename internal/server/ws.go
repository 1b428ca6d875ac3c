package server

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

const (
	wsWriteWait  = 10 * time.Second
	wsPongWait   = 60 * time.Second
	wsPingPeriod = wsPongWait * 9 / 10
	// wsQueue is how many messages may wait for a slow client before it
	// is dropped; the others never wait for it.
	wsQueue = 256
)

// upgrader accepts a WebSocket only from a page of this server: the
// Origin's host must be the request's Host (which hostCheck has checked).
var upgrader = websocket.Upgrader{
	ReadBufferSize:  1024,
	WriteBufferSize: 4096,
	CheckOrigin:     func(r *http.Request) bool { return r.Header.Get("Origin") != "" && sameOrigin(r) },
}

// serveWS upgrades the request and sends every value from src as JSON
// until src closes, the client goes away or ctx ends. One goroutine writes
// (this one); another reads, only to see pongs and the close.
func serveWS(ctx context.Context, w http.ResponseWriter, r *http.Request, src func(ctx context.Context, out chan<- any)) error {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return err // the upgrader has answered the client
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn.SetReadLimit(4096)
	_ = conn.SetReadDeadline(time.Now().Add(wsPongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(wsPongWait)) })
	go func() {
		defer cancel()
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	out := make(chan any, wsQueue)
	go func() {
		defer close(out)
		src(ctx, out)
	}()
	ping := time.NewTicker(wsPingPeriod)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(time.Second))
			return nil
		case v, ok := <-out:
			if !ok {
				_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
				return nil
			}
			_ = conn.SetWriteDeadline(time.Now().Add(wsWriteWait))
			if err := conn.WriteJSON(v); err != nil {
				return err
			}
		case <-ping.C:
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(wsWriteWait)); err != nil {
				return err
			}
		}
	}
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
