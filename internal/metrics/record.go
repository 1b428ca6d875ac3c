package metrics

import (
	"sync"
	"time"
)

// Outcomes of timed operations.
const (
	outcomeOK     = "ok"
	outcomeFailed = "failed"
	outcomeError  = "error"
)

// ObserveProvisioning records how long making a session ready took on
// provider, and whether it failed.
func (m *Metrics) ObserveProvisioning(provider string, d time.Duration, err error) {
	if m == nil {
		return
	}
	outcome := outcomeOK
	if err != nil {
		outcome = outcomeError
	}
	m.provisioning.WithLabelValues(provider, outcome).Observe(d.Seconds())
}

// ObserveCheck records how long a Check of an exercise of lab took: passed
// when every goal passed, err when it could not grade.
func (m *Metrics) ObserveCheck(lab string, d time.Duration, passed bool, err error) {
	if m == nil {
		return
	}
	outcome := outcomeFailed
	switch {
	case err != nil:
		outcome = outcomeError
	case passed:
		outcome = outcomeOK
	}
	m.checks.WithLabelValues(lab, outcome).Observe(d.Seconds())
}

// SetWarmPool records how many ready clusters of lab wait in provider's
// warm pool.
func (m *Metrics) SetWarmPool(provider, lab string, n int) {
	if m == nil {
		return
	}
	m.warmPool.WithLabelValues(provider, lab).Set(float64(n))
}

// Stream names a kind of WebSocket.
type Stream string

// Kinds of WebSocket.
const (
	StreamLog      Stream = "log"      // an operator's reconcile log
	StreamView     Stream = "view"     // a session's resources and progress
	StreamConsole  Stream = "console"  // the web console
	StreamClass    Stream = "class"    // the instructor's dashboard
	StreamTimeline Stream = "timeline" // a session's timeline
)

// WebSocketOpened counts an open WebSocket of kind s; call the returned
// function once when it closes.
func (m *Metrics) WebSocketOpened(s Stream) (closed func()) {
	if m == nil {
		return func() {}
	}
	g := m.wsClients.WithLabelValues(string(s))
	g.Inc()
	return sync.OnceFunc(g.Dec)
}

// Console is the outcome of a web console command.
type Console string

// Outcomes of a console command.
const (
	ConsoleOK      Console = "ok"      // ran and exited 0
	ConsoleFailed  Console = "failed"  // ran and exited non-zero
	ConsoleRefused Console = "refused" // outside the allow-list: not run
)

// ConsoleCommand counts a web console command.
func (m *Metrics) ConsoleCommand(c Console) {
	if m == nil {
		return
	}
	m.console.WithLabelValues(string(c)).Inc()
}

// Reason is why a request was refused.
type Reason string

// Reasons for refusing.
const (
	RefusedCapacity    Reason = "capacity"     // no headroom for another cluster now
	RefusedClassClosed Reason = "class_closed" // closed, not open yet or ended
	RefusedClassFull   Reason = "class_full"
	RefusedRateLimit   Reason = "rate_limit"  // too many wrong codes or passwords
	RefusedForbidden   Reason = "forbidden"   // not the caller's session or class
	RefusedConsole     Reason = "console"     // a console command outside the allow-list
	RefusedUnsupported Reason = "unsupported" // the provider lacks what the lab needs
)

// Refused counts a refused request.
func (m *Metrics) Refused(r Reason) {
	if m == nil {
		return
	}
	m.refusals.WithLabelValues(string(r)).Inc()
}
