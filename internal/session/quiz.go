package session

import (
	"context"

	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/store"
)

// Quiz grades a learner's answers to q for session id and records them and
// the score. Cluster questions are checked against the session's cluster
// while it exists; once it was deleted they count as not correct.
func (m *Manager) Quiz(ctx context.Context, id string, q *quiz.Quiz, answers quiz.Answers) (*quiz.Result, error) {
	unlock, err := m.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	s, err := m.load(ctx, id)
	if err == nil {
		err = m.settle(ctx, s, nil, true)
	}
	if err != nil {
		return nil, err
	}
	var ca quiz.ClusterAnswers
	if m.hasCluster(s) {
		if e, err := m.engine(&s.rec); err == nil {
			ca = e
		}
	}
	res := quiz.Grade(ctx, q, answers, ca)
	data := QuizData{Quiz: q.ID, Answers: answers, Correct: res.Correct, Total: res.Total}
	ev := newEvent(KindQuiz, "", "quiz "+q.ID+" answered", data)
	ctx = context.WithoutCancel(ctx)
	r := &store.Result{SessionID: id, Kind: store.ResultQuiz, Item: q.ID, Score: res.Correct, Total: res.Total,
		Passed: res.Correct == res.Total, Data: ev.Data}
	if err := m.o.Store.PutResult(ctx, r); err != nil {
		return nil, err
	}
	if err := m.o.Store.AppendEvents(ctx, id, ev); err != nil {
		return nil, err
	}
	return &res, nil
}

// hasCluster reports whether the session's cluster exists.
func (m *Manager) hasCluster(s *live) bool {
	if m.o.Provider == nil || s.state() == Provisioning {
		return false
	}
	_, err := m.o.Provider.KubeconfigPath(s.rec.Cluster)
	return err == nil
}
