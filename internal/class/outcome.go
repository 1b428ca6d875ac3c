package class

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// outcome is what one session recorded, by exercise.
type outcome struct {
	exercises map[string]*exerciseRecord
	results   []store.Result
}

// exerciseRecord is what a session recorded of one exercise.
type exerciseRecord struct {
	result *store.Result
	t0, t1 time.Time
	hints  int
}

func (e *exerciseRecord) fill(r *Row) {
	if e.result != nil {
		r.Score, r.Total, r.Passed, r.Recovery = e.result.Score, e.result.Total, e.result.Passed, jsonconv.Duration(e.result.Recovery)
	}
	r.T0, r.T1, r.Hints = e.t0, e.t1, e.hints
}

func (o *outcome) quiz(id string) *store.Result {
	var out *store.Result
	for i, r := range o.results {
		if r.Kind == store.ResultQuiz && (id == "" || r.Item == id) && (out == nil || better(&o.results[i], out)) {
			out = &o.results[i]
		}
	}
	return out
}

// outcome reads a session's results and the timeline events that carry T0,
// T1 and hints.
func (s *Service) outcome(ctx context.Context, sess store.Session) (*outcome, error) {
	rs, err := s.o.Store.Results(ctx, sess.ID)
	if err != nil {
		return nil, err
	}
	evs, err := s.o.Store.EventsOfKind(ctx, sess.ID, session.KindChaos, session.KindRecovered, session.KindHint)
	if err != nil {
		return nil, err
	}
	o := &outcome{exercises: map[string]*exerciseRecord{}, results: rs}
	rec := func(ex string) *exerciseRecord {
		if o.exercises[ex] == nil {
			o.exercises[ex] = &exerciseRecord{}
		}
		return o.exercises[ex]
	}
	for i, r := range rs {
		if r.Kind == store.ResultExercise {
			rec(r.Item).result = &rs[i]
		}
	}
	for _, ev := range evs {
		if ev.Exercise == "" {
			continue
		}
		if err := rec(ev.Exercise).apply(ev); err != nil {
			return nil, fmt.Errorf("session %s: event %d: %w", sess.ID, ev.Seq, err)
		}
	}
	return o, nil
}

// apply takes an event's part of the record. Events come oldest first: a
// later chaos (after a reset) starts the clock again, and the recovered
// event carries the attempt that counted.
func (e *exerciseRecord) apply(ev store.Event) error {
	switch ev.Kind {
	case session.KindChaos:
		var d session.ChaosData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		if !d.T0.IsZero() && e.t1.IsZero() {
			e.t0 = d.T0
		}
	case session.KindRecovered:
		var d session.AttemptData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		if d.Attempt != nil {
			e.t0, e.t1 = d.Attempt.T0, d.Attempt.T1
		}
	case session.KindHint:
		var d session.HintData
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			return err
		}
		e.hints = max(e.hints, d.Index+1)
	}
	return nil
}
