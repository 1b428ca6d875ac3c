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
// Serve writes one subscription to a gorilla WebSocket connection with one
// writer goroutine, pings, and deadlines.
//
// The application layer builds the Hub with an Opener that maps a key to
// its upstream, for instance "log/<session>" to an oplog.Follower's RunJSON
// and "cluster/<session>" to a clusterview.Watcher; the server checks that
// the caller owns the session before it subscribes:
//
//	hub := stream.New(open, stream.Options{})
//	sub, err := hub.Subscribe("log/"+id, stream.From{Epoch: epoch, Seq: after})
//	conn, err := stream.NewUpgrader().Upgrade(w, r, nil)
//	err = stream.Serve(r.Context(), conn, sub, stream.WSOptions{})
package stream
