// Package stream fans one upstream out to many subscribers: one operator
// log follower or one set of watches per cluster, however many browsers
// look at it.
//
// A Hub runs one upstream per key, started by the first subscriber and
// stopped a grace period after the last one leaves. Each frame the upstream
// emits is numbered from 1 and kept in a bounded ring, so a subscriber that
// reconnects resumes after the last number it saw; one that fell out of the
// ring is told how many frames it missed (a gap frame). Subscribers pull
// from the ring at their own pace and the upstream never waits for them; a
// subscriber that falls more than MaxLag frames behind live is dropped.
//
// Serve writes one subscription to a gorilla WebSocket connection with one
// writer goroutine, pings, and deadlines.
package stream
