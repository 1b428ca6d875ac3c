package quiz

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"oplab.dev/oplab/internal/locale"
)

// Answers maps a question id to the learner's answer: the chosen choice ids
// for single and multiple questions, one value for cluster questions.
type Answers map[string][]string

// Result is a graded quiz.
type Result struct {
	QuizID    string           `json:"quizId"`
	Correct   int              `json:"correct"`
	Total     int              `json:"total"`
	Questions []QuestionResult `json:"questions"`
}

// QuestionResult is the outcome of one question, with its explanation.
type QuestionResult struct {
	ID       string `json:"id"`
	Correct  bool   `json:"correct"`
	Answered bool   `json:"answered"`
	// Expected is the correct choice ids, or the value read from the
	// cluster; it and Explanation are left out of what a learner sees
	// until the grade is final (see Result.Disclose).
	Expected    []string    `json:"expected,omitempty"`
	Explanation locale.Text `json:"explanation,omitzero"`
	// Error says why a cluster question could not be checked; such a
	// question counts as not correct.
	Error string `json:"error,omitempty"`
}

// ErrNoCluster is reported for cluster questions when no ClusterAnswers is given.
var ErrNoCluster = errors.New("no cluster to check the answer against")

// Grade grades answers against q. Cluster questions are checked against ca,
// which may be nil when the learner has no cluster. Answers that are not
// answers to q's questions (see Quiz.Check) are an error wrapping
// ErrBadAnswer, and nothing is graded: a typo must not count as wrong.
func Grade(ctx context.Context, q *Quiz, answers Answers, ca ClusterAnswers) (Result, error) {
	if err := q.Check(answers); err != nil {
		return Result{}, err
	}
	r := Result{QuizID: q.ID, Total: len(q.Questions)}
	for i := range q.Questions {
		qr := gradeQuestion(ctx, &q.Questions[i], answers[q.Questions[i].ID], ca)
		if qr.Correct {
			r.Correct++
		}
		r.Questions = append(r.Questions, qr)
	}
	return r, nil
}

func gradeQuestion(ctx context.Context, q *Question, given []string, ca ClusterAnswers) QuestionResult {
	qr := QuestionResult{ID: q.ID, Answered: len(given) > 0, Explanation: q.Explanation}
	switch q.Type {
	case Single, Multiple:
		want := q.correctChoices()
		for _, c := range q.Choices {
			if want[c.ID] {
				qr.Expected = append(qr.Expected, c.ID)
			}
		}
		qr.Correct = sameSet(want, given)
	case Cluster:
		if ca == nil {
			qr.Error = ErrNoCluster.Error()
			return qr
		}
		truth, err := ca.Answer(ctx, *q.Answer)
		if err != nil {
			qr.Error = fmt.Sprintf("read %s of %s: %v", q.Answer.Query, q.Answer.Cluster, err)
			return qr
		}
		qr.Expected = []string{truth}
		k, _ := LookupQuery(q.Answer.Query)
		qr.Correct = len(given) == 1 && sameValue(k.Numeric, truth, given[0])
	}
	return qr
}

func sameSet(want map[string]bool, given []string) bool {
	got := map[string]bool{}
	for _, g := range given {
		got[strings.TrimSpace(g)] = true
	}
	if len(got) != len(want) {
		return false
	}
	for id := range want {
		if !got[id] {
			return false
		}
	}
	return true
}

func sameValue(numeric bool, truth, given string) bool {
	truth, given = strings.TrimSpace(truth), strings.TrimSpace(given)
	if numeric {
		a, err1 := strconv.Atoi(truth)
		b, err2 := strconv.Atoi(given)
		return err1 == nil && err2 == nil && a == b
	}
	// Learners may answer "pod/prod-db-1" as kubectl prints it.
	given = strings.TrimPrefix(strings.ToLower(given), "pod/")
	return truth != "" && strings.EqualFold(truth, given)
}
