package session

import (
	"context"
	"fmt"

	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/store"
)

// Quiz grades a learner's answers to quiz quizID of the course for session
// id, and records them and the score. Cluster questions are checked
// against the session's cluster while it exists; once it was deleted they
// count as not correct. Answers that are not answers to the quiz's
// questions are an error wrapping quiz.ErrBadAnswer, and nothing is
// recorded; so is an unknown quiz (course.ErrUnknownQuiz).
func (m *Manager) Quiz(ctx context.Context, id, quizID string, answers quiz.Answers) (*quiz.Result, error) {
	q, err := m.o.Course.Quiz(quizID)
	if err != nil {
		return nil, err
	}
	if err := q.Check(answers); err != nil {
		return nil, err
	}
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
	res, err := quiz.Grade(ctx, q, answers, ca)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
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

// GradeQuiz grades answers to quiz quizID without a session: cluster
// questions count as not correct, and nothing is recorded. Errors are as
// in Quiz.
func (m *Manager) GradeQuiz(ctx context.Context, quizID string, answers quiz.Answers) (*quiz.Result, error) {
	q, err := m.o.Course.Quiz(quizID)
	if err != nil {
		return nil, err
	}
	res, err := quiz.Grade(ctx, q, answers, nil)
	if err != nil {
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
