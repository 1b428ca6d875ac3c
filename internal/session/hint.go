package session

import (
	"context"
	"fmt"

	"oplab.dev/oplab/internal/locale"
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
}

// ShownHint is a hint as the learner sees it (not the evidence that
// released it).
type ShownHint struct {
	Tier string      `json:"tier"`
	Text locale.Text `json:"text"`
}

// Hint shows the next hint of the current exercise if its evidence was
// seen or its time has come, and records it. Hints come strictly in order,
// gentlest first. An exercise without chaos is started first if it has not
// been; one with chaos must have had it (ErrOutOfOrder otherwise).
func (m *Manager) Hint(ctx context.Context, id string) (*HintResult, error) {
	s, unlock, err := m.open(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ex := s.exercise()
	if s.work.Attempt == nil && len(ex.Chaos) > 0 {
		return nil, fmt.Errorf("exercise %s has not started: inject its chaos first: %w", ex.ID, ErrOutOfOrder)
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
		ev := newEvent(KindHint, ex.ID, fmt.Sprintf("hint %d (%s) shown", h.Index+1, h.Hint.Tier), HintData{Index: h.Index, Tier: h.Hint.Tier})
		if err := m.save(ctx, s, nil, ev); err != nil {
			return nil, err
		}
		res.New = true
	}
	for _, h := range ex.Hints[:min(s.work.Hints, len(ex.Hints))] {
		res.Shown = append(res.Shown, ShownHint{Tier: h.Tier, Text: h.Text})
	}
	res.More = s.work.Hints < len(ex.Hints)
	return res, nil
}
