package lab

import "time"

// Unlock kinds: what made a hint due.
const (
	UnlockTime    = "time"    // its time since T0 (or the start) came
	UnlockLog     = "log"     // the operator logged a matching line
	UnlockEvent   = "event"   // an event with its reason was recorded
	UnlockMessage = "message" // an event with a matching message was recorded
)

// Unlock says why a hint is due, so a learner sees what to look at next
// time: the evidence that was seen, or the time that passed.
type Unlock struct {
	Kind    string        // UnlockTime, UnlockLog, UnlockEvent or UnlockMessage
	After   time.Duration // UnlockTime: the hint's after
	Pattern string        // UnlockLog, UnlockMessage: the pattern that matched
	Reason  string        // UnlockEvent: the event's reason
	Seen    string        // the log line or the event's message that matched
}

// Unlock reports why h may be shown. Evidence is named before time: it
// tells the learner more (a hint due for both says what was seen).
func (h *Hint) Unlock(o Observed) (Unlock, bool) {
	for i := range h.When {
		if u, ok := h.When[i].unlock(o); ok {
			return u, true
		}
	}
	if h.After.Duration > 0 && o.Elapsed >= h.After.Duration {
		return Unlock{Kind: UnlockTime, After: h.After.Duration}, true
	}
	return Unlock{}, false
}

// Due reports whether h may be shown: its time has come or its evidence
// has been seen.
func (h *Hint) Due(o Observed) bool {
	_, ok := h.Unlock(o)
	return ok
}

func (ev *Evidence) unlock(o Observed) (Unlock, bool) {
	switch {
	case ev.Log != "":
		for _, l := range o.Log {
			if ev.re != nil && ev.re.MatchString(l) {
				return Unlock{Kind: UnlockLog, Pattern: ev.Log, Seen: l}, true
			}
		}
	case ev.EventReason != "":
		for _, e := range o.Events {
			if e.Reason == ev.EventReason {
				return Unlock{Kind: UnlockEvent, Reason: ev.EventReason, Seen: e.Message}, true
			}
		}
	case ev.EventMessage != "":
		for _, e := range o.Events {
			if ev.re != nil && ev.re.MatchString(e.Message) {
				return Unlock{Kind: UnlockMessage, Pattern: ev.EventMessage, Seen: e.Message}, true
			}
		}
	}
	return Unlock{}, false
}

// Wait is what a hint not shown yet waits for: the rest of its time, or
// sooner any of its evidence.
type Wait struct {
	After time.Duration // the hint's after; zero when only evidence shows it
	Left  time.Duration // time left until After; zero once it has passed
	When  []Evidence    // seeing any of these shows it sooner
	// Due is true when it may be shown already (it waits only for the
	// hints before it, or for the learner to ask).
	Due bool
}

// Wait reports what h waits for, given what was observed so far.
func (h *Hint) Wait(o Observed) Wait {
	w := Wait{After: h.After.Duration, When: h.When, Due: h.Due(o)}
	if w.After > 0 && o.Elapsed < w.After {
		w.Left = w.After - o.Elapsed
	}
	return w
}
