package session

import (
	"context"
	"encoding/json"
	"fmt"

	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/store"
)

// HintResult is the outcome of Hint.
type HintResult struct {
	Exercise string `json:"exercise"`
	// Shown are the hints shown so far in this attempt, oldest first; the
	// last is new when New is true.
	Shown []ShownHint `json:"shown"`
	New   bool        `json:"new"`
	// More is true when the exercise has hints not shown yet.
	More bool `json:"more"`
	// Next is what the next hint waits for; nil when none is left.
	Next *HintWait `json:"next,omitempty"`
}

// ShownHint is a hint as the learner sees it, with what unlocked it.
type ShownHint struct {
	Tier string      `json:"tier"`
	Text locale.Text `json:"text"`
	// Unlock is what made it due; nil for a hint an older oplab recorded.
	Unlock *HintUnlock `json:"unlock,omitempty"`
}

// Hint shows the next hint of the current exercise if its evidence was
// seen or its time has come, and records it with what unlocked it. Hints
// come strictly in order, gentlest first. An exercise without chaos is
// started first if it has not been; one with chaos must have had it
// (ErrOutOfOrder otherwise).
func (m *Manager) Hint(ctx context.Context, id string) (*HintResult, error) {
	s, unlock, err := m.open(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ex := s.exercise()
	if err := s.refuse(ActHint); err != nil {
		return nil, err
	}
	e, err := m.engine(&s.rec)
	if err != nil {
		return nil, err
	}
	if s.work.Attempt == nil {
		// An exercise without chaos starts when the learner turns to it.
		if err := m.begin(ctx, s, e, nil); err != nil {
			return nil, err
		}
	}
	res := &HintResult{Exercise: ex.ID}
	h, ok, err := e.NextHint(ctx, s.lab, s.work.Attempt, s.work.Hints)
	if err != nil {
		return nil, err
	}
	if ok {
		s.work.Hints = h.Index + 1
		u := unlockView(h.Unlock, s.work.Attempt)
		ev := newEvent(KindHint, ex.ID, fmt.Sprintf("hint %d (%s) shown: %s", h.Index+1, h.Hint.Tier, u),
			HintData{Index: h.Index, Tier: h.Hint.Tier, Unlock: &u})
		if err := m.save(ctx, s, nil, ev); err != nil {
			return nil, err
		}
		res.New = true
	}
	unlocks, err := m.hintUnlocks(ctx, s)
	if err != nil {
		return nil, err
	}
	for i, h := range ex.Hints[:min(s.work.Hints, len(ex.Hints))] {
		res.Shown = append(res.Shown, ShownHint{Tier: h.Tier, Text: h.Text, Unlock: unlocks[i]})
	}
	res.More = s.work.Hints < len(ex.Hints)
	if h.Next != nil {
		res.Next = waitView(*h.Next)
	}
	return res, nil
}

// hintUnlocks reads from the timeline what unlocked each hint shown in the
// current attempt, by index: the timeline, not the working state, is the
// record, so any process (a server, the CLI) answers alike.
// Only the attempt's hint events are read: at most one per hint of the
// exercise, however long the timeline.
func (m *Manager) hintUnlocks(ctx context.Context, s *live) (map[int]*HintUnlock, error) {
	a := s.work.Attempt
	f := store.EventFilter{Kinds: []string{KindHint}, Exercise: a.Exercise, Since: a.Started}
	evs, err := m.o.Store.LatestEvents(ctx, s.rec.ID, f, max(len(s.exercise().Hints), 1))
	if err != nil {
		return nil, err
	}
	out := map[int]*HintUnlock{}
	for _, ev := range evs {
		var d HintData
		if json.Unmarshal(ev.Data, &d) == nil && d.Unlock != nil {
			out[d.Index] = d.Unlock // a later attempt's record replaces an earlier one's
		}
	}
	return out, nil
}

// Unlock kinds (see HintUnlock).
const (
	UnlockTime    = lab.UnlockTime
	UnlockLog     = lab.UnlockLog
	UnlockEvent   = lab.UnlockEvent
	UnlockMessage = lab.UnlockMessage
)

// What a time is counted from.
const (
	SinceFault = "fault" // T0: the chaos took effect
	SinceStart = "start" // the exercise began (it has no chaos)
)

// HintUnlock is what made a hint due: evidence seen (the operator's log,
// an event's reason or message) or time since the fault or the start.
type HintUnlock struct {
	Kind string `json:"kind"` // UnlockTime, UnlockLog, UnlockEvent or UnlockMessage
	// After is the hint's time (UnlockTime), counted from Since.
	After jsonconv.Duration `json:"afterMs,omitempty"`
	Since string            `json:"since,omitempty"` // SinceFault or SinceStart
	// Pattern is the log or event message pattern that matched
	// (UnlockLog, UnlockMessage); Reason the event's reason (UnlockEvent).
	Pattern string `json:"pattern,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Seen is the log line or the event message that matched.
	Seen string `json:"seen,omitempty"`
}

// String says what unlocked a hint, for the timeline.
func (u HintUnlock) String() string {
	switch u.Kind {
	case UnlockTime:
		return fmt.Sprintf("%s since the %s", u.After.Duration(), u.Since)
	case UnlockEvent:
		return fmt.Sprintf("a %s event: %s", u.Reason, u.Seen)
	default:
		return fmt.Sprintf("%s matching %q: %s", u.Kind, u.Pattern, u.Seen)
	}
}

// HintWait is what the next hint waits for: its time, or sooner any of its
// evidence.
type HintWait struct {
	// Left is the time until it is due by time alone; zero when it has no
	// time (only evidence shows it) or its time has passed.
	Left     jsonconv.Duration `json:"leftMs,omitempty"`
	Evidence []HintEvidence    `json:"evidence,omitempty"`
	// Due is true when it may be shown already: ask again.
	Due bool `json:"due,omitempty"`
}

// HintEvidence is one piece of evidence a hint waits for.
type HintEvidence struct {
	Kind    string `json:"kind"`              // UnlockLog, UnlockEvent or UnlockMessage
	Pattern string `json:"pattern,omitempty"` // UnlockLog, UnlockMessage
	Reason  string `json:"reason,omitempty"`  // UnlockEvent
}

// seenMax bounds a recorded log line or event message; the whole is in
// the log and the events.
const seenMax = 300

func unlockView(u lab.Unlock, a *engine.Attempt) HintUnlock {
	v := HintUnlock{Kind: u.Kind, Pattern: u.Pattern, Reason: u.Reason, Seen: clip(u.Seen, seenMax)}
	if u.Kind == UnlockTime {
		v.After, v.Since = jsonconv.Millis(u.After), SinceStart
		if !a.T0.IsZero() {
			v.Since = SinceFault
		}
	}
	return v
}

func waitView(w lab.Wait) *HintWait {
	v := &HintWait{Left: jsonconv.Millis(w.Left), Due: w.Due}
	for _, ev := range w.When {
		switch {
		case ev.Log != "":
			v.Evidence = append(v.Evidence, HintEvidence{Kind: UnlockLog, Pattern: ev.Log})
		case ev.EventReason != "":
			v.Evidence = append(v.Evidence, HintEvidence{Kind: UnlockEvent, Reason: ev.EventReason})
		case ev.EventMessage != "":
			v.Evidence = append(v.Evidence, HintEvidence{Kind: UnlockMessage, Pattern: ev.EventMessage})
		}
	}
	return v
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
