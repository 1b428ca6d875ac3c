// Package stream fans one upstream out to many subscribers: one operator
// log follower or one set of watches per cluster, however many browsers
// look at it.
//
// A Hub runs one upstream per key, started by the first subscriber and
// stopped a grace period after the last one leaves. Each frame the upstream
// emits is numbered from 1 and kept in a ring bounded in frames and in bytes
// (Options.Ring, Options.RingBytes: whatever a learner makes the frames, a
// key holds a bounded amount), so a subscriber that reconnects resumes
// after the last number it saw; one that fell out of the ring is told how
// many frames it missed (a gap frame). Subscribers pull
// from the ring at their own pace and the upstream never waits for them; a
// subscriber that falls more than MaxLag frames behind live is dropped.
//
// The frames are frame.Frame, the one type the web server writes too: a
// data frame's JSON is made once, when it is published, and every
// subscriber's connection writes those bytes. This package has no
// WebSocket of its own: the server's writer (internal/server/ws.go: one
// writer goroutine per connection, pings, deadlines, the same-origin
// check) is the one every stream goes through, and
// BenchmarkLogLineTo100Clients (internal/app/webapp) measures a line's way
// through it.
//
// The application layer builds the Hub with an Opener that maps a key to
// its upstream, for instance "log/<session>" to an oplog.Follower's RunJSON
// and "cluster/<session>" to a clusterview.Watcher; the server checks that
// the caller owns the session before it subscribes, and webapp hands the
// subscription's frames to the server's writer:
//
//	hub := stream.New(open, stream.Options{})
//	sub, err := hub.Subscribe("log/"+id, stream.From{Epoch: epoch, Seq: after})
//	defer sub.Close()
//	for {
//		f, err := sub.Next(ctx) // a frame.Frame
//		...
//	}
package stream
