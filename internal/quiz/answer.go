package quiz

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrBadAnswer is wrapped by the errors of ParseAnswer, Check and Grade
// for answers that are not answers to the question asked: an unknown
// question or choice, two choices to a single-choice question, an empty
// answer.
var ErrBadAnswer = errors.New("bad answer")

// AnswerError is what is wrong with an answer as typed, in words a learner
// understands; it wraps ErrBadAnswer.
type AnswerError struct{ Problem string }

func (e *AnswerError) Error() string { return e.Problem }

// Is makes errors.Is(err, ErrBadAnswer) true.
func (e *AnswerError) Is(target error) bool { return target == ErrBadAnswer }

// ParseAnswer reads a learner's answer to q as typed: a choice's id for a
// single-choice question, ids separated by commas or spaces for a
// multiple-choice one (case and repeats do not matter), and the value
// itself for a cluster question. A front end asks again when it fails;
// the error says what is wrong in words a learner understands.
func ParseAnswer(q PublicQuestion, text string) ([]string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, &AnswerError{"give an answer"}
	}
	if q.Type == Cluster {
		return []string{text}, nil
	}
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	var answer []string
	for _, f := range fields {
		if !slices.ContainsFunc(q.Choices, func(c PublicChoice) bool { return c.ID == f }) {
			return nil, &AnswerError{fmt.Sprintf("%q is not a choice (choose from %s)", f, strings.Join(choiceIDs(q.Choices), ", "))}
		}
		if !slices.Contains(answer, f) {
			answer = append(answer, f)
		}
	}
	if q.Type == Single && len(answer) != 1 {
		return nil, &AnswerError{"choose exactly one"}
	}
	return answer, nil
}

func choiceIDs(cs []PublicChoice) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

// Check returns an error wrapping ErrBadAnswer, naming every problem, when
// answers are not all answers to q's questions: an unknown question, an
// unknown or repeated choice, other than exactly one choice to a
// single-choice question, other than one value to a cluster question, or
// an empty value. A question left out is not a problem: it is not answered,
// and so not correct.
func (q *Quiz) Check(answers Answers) error {
	var problems []string
	for _, id := range sortedKeys(answers) {
		qq, ok := q.Question(id)
		if !ok {
			problems = append(problems, fmt.Sprintf("quiz %s has no question %q", q.ID, id))
			continue
		}
		if p := qq.check(answers[id]); p != "" {
			problems = append(problems, fmt.Sprintf("question %s: %s", id, p))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrBadAnswer, strings.Join(problems, "; "))
	}
	return nil
}

// check says what is wrong with given as an answer to q, or "".
func (q *Question) check(given []string) string {
	if len(given) == 0 {
		return "no answer given"
	}
	if slices.ContainsFunc(given, func(g string) bool { return strings.TrimSpace(g) == "" }) {
		return "an empty answer"
	}
	switch q.Type {
	case Cluster:
		if len(given) != 1 {
			return fmt.Sprintf("got %d values, want one", len(given))
		}
		return ""
	case Single:
		if len(given) != 1 {
			return fmt.Sprintf("got %d choices, want exactly one", len(given))
		}
	}
	seen := map[string]bool{}
	for _, g := range given {
		g = strings.TrimSpace(g)
		if !slices.ContainsFunc(q.Choices, func(c Choice) bool { return c.ID == g }) {
			ids := make([]string, len(q.Choices))
			for i, c := range q.Choices {
				ids[i] = c.ID
			}
			return fmt.Sprintf("%q is not a choice (choices: %s)", g, strings.Join(ids, ", "))
		}
		if seen[g] {
			return fmt.Sprintf("choice %q given twice", g)
		}
		seen[g] = true
	}
	return ""
}

func sortedKeys(a Answers) []string {
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
