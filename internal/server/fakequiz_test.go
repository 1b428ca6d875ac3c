package server

import (
	"context"
	"fmt"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/quiz"
)

// fakeQuiz is every fake session's quiz: one question.
var fakeQuiz = &quiz.Quiz{ID: "failover", Title: locale.Text{En: "Failover", Ko: "페일오버"}, Questions: []quiz.Question{{
	ID: "q1", Type: "single", Prompt: locale.Text{En: "Who picks the new primary?", Ko: "누가 새 프라이머리를 고르나요?"},
	Choices:     []quiz.Choice{{ID: "a", Text: locale.Text{En: "the operator", Ko: "오퍼레이터"}, Correct: true}, {ID: "b", Text: locale.Text{En: "etcd", Ko: "etcd"}}},
	Explanation: locale.Text{En: "The operator elects the most advanced replica.", Ko: "오퍼레이터가 가장 앞선 레플리카를 선출합니다."},
}}}

// fakeQuizzes are fakeLearning's graded quizzes per session: the quiz
// package's own rules (a whole submission, one graded attempt, answers
// disclosed once final), kept in memory instead of the store.
type fakeQuizzes struct {
	standing map[string]quiz.Standing
	grade    map[string]quiz.Result
}

func (f *fakeLearning) Quiz(_ context.Context, id string) (*quiz.View, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, grade := f.quizStanding(id)
	v := quiz.NewView(fakeQuiz, st, grade)
	return &v, nil
}

func (f *fakeLearning) Answer(ctx context.Context, id string, answers quiz.Answers) (*quiz.Outcome, error) {
	f.record(fmt.Sprintf("answer %s %v", id, answers))
	if err := fakeQuiz.CheckSubmission(answers); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	res, err := quiz.Grade(ctx, fakeQuiz, answers, nil)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st, grade := f.quizStanding(id)
	next, graded := st.Submit(res.Correct == res.Total)
	if graded {
		if f.quizzes.standing == nil {
			f.quizzes = fakeQuizzes{standing: map[string]quiz.Standing{}, grade: map[string]quiz.Result{}}
		}
		f.quizzes.standing[id], f.quizzes.grade[id] = next, res
		grade = &res
	}
	out := quiz.NewOutcome(*grade, next, graded)
	return &out, nil
}

// quizStanding is session id's standing and grade; f.mu is held.
func (f *fakeLearning) quizStanding(id string) (quiz.Standing, *quiz.Result) {
	st, ok := f.quizzes.standing[id]
	if !ok {
		return quiz.Standing{Allowed: fakeQuiz.AttemptsAllowed()}, nil
	}
	g := f.quizzes.grade[id]
	return st, &g
}
