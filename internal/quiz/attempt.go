package quiz

import (
	"fmt"
	"strings"

	"oplab.dev/oplab/internal/locale"
)

// A quiz is graded a fixed number of times per learner (its attempts);
// submissions after those are kept on the learner's timeline and change
// nothing. Expected answers and explanations are shown only once the
// grade is final, and only for the questions the learner answered, so
// that no submission can be used to read the answers and then be
// outdone by a better one.
const (
	// DefaultAttempts is the number of graded attempts of a quiz that
	// does not set its own: the first submission is the grade.
	DefaultAttempts = 1
	// MaxAttempts caps a quiz's attempts: every attempt tells the learner
	// which answers were right, so many attempts add up to the answers.
	MaxAttempts = 10
)

// AttemptsAllowed returns how many submissions of q are graded.
func (q *Quiz) AttemptsAllowed() int {
	if q.Attempts == nil {
		return DefaultAttempts
	}
	return *q.Attempts
}

// CheckSubmission returns an error wrapping ErrBadAnswer when answers
// cannot be submitted: when they are not answers to q's questions (see
// Check) or leave a question out. A submission answers every question:
// it is graded, and a grade must not be spent, nor answers be shown, on
// questions nobody answered.
func (q *Quiz) CheckSubmission(answers Answers) error {
	if err := q.Check(answers); err != nil {
		return err
	}
	var missing []string
	for _, qq := range q.Questions {
		if len(answers[qq.ID]) == 0 {
			missing = append(missing, qq.ID)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: answer every question (%d of %d not answered: %s); nothing was recorded",
			ErrBadAnswer, len(missing), len(q.Questions), strings.Join(missing, ", "))
	}
	return nil
}

// Standing is where a learner stands with a quiz: how many of their
// submissions were graded, of how many that can be.
type Standing struct {
	Used    int  // graded submissions so far
	Allowed int  // submissions that are graded
	Perfect bool // the grade that counts has every answer right
}

// Final reports whether the grade is fixed: every graded attempt is
// used, or the grade is perfect and no attempt could better it.
func (s Standing) Final() bool { return s.Used >= s.Allowed || s.Used > 0 && s.Perfect }

// Submit returns the standing after one more submission whose grade is
// perfect or not, and whether that submission is graded. A submission
// once the grade is final is not: the standing stays as it was.
func (s Standing) Submit(perfect bool) (Standing, bool) {
	if s.Final() {
		return s, false
	}
	return Standing{Used: s.Used + 1, Allowed: s.Allowed, Perfect: perfect}, true
}

// Outcome is what a learner is told of a submission.
type Outcome struct {
	// Result is the grade that counts (this submission's when Graded,
	// else the final one recorded before), disclosed as Disclose allows.
	Result
	// Attempt is how many graded attempts are used, this one included
	// when Graded; Attempts is how many can be.
	Attempt  int `json:"attempt"`
	Attempts int `json:"attempts"`
	// Graded is false for a submission made after the grade was final:
	// it is kept on the timeline and changes nothing.
	Graded bool `json:"graded"`
	// Final: the grade is fixed, and the expected answers and
	// explanations of the answered questions are shown.
	Final bool `json:"final"`
}

// NewOutcome returns what a learner is told of a submission: grade is
// the grade that counts and s the standing after the submission.
func NewOutcome(grade Result, s Standing, graded bool) Outcome {
	return Outcome{Result: grade.Disclose(s.Final()), Attempt: s.Used, Attempts: s.Allowed, Graded: graded, Final: s.Final()}
}

// Disclose returns r as a learner may see it: whether each answer was
// right, and the expected answer and explanation only of questions they
// answered, and only when final (before, they would hand the answers to
// the next attempt).
func (r Result) Disclose(final bool) Result {
	out := r
	out.Questions = make([]QuestionResult, len(r.Questions))
	for i, qr := range r.Questions {
		if !final || !qr.Answered {
			qr.Expected, qr.Explanation = nil, locale.Text{}
		}
		out.Questions[i] = qr
	}
	return out
}

// View is a quiz as a learner may see it: its questions without their
// answers, how many attempts are used, and the grade so far.
type View struct {
	Public
	Attempt  int  `json:"attempt"`
	Attempts int  `json:"attempts"`
	Final    bool `json:"final"`
	// Grade is the grade that counts, disclosed as Disclose allows; nil
	// before the first graded submission.
	Grade *Result `json:"grade,omitempty"`
}

// NewView returns q as a learner in standing s, whose grade that counts is
// grade (nil when none), may see it.
func NewView(q *Quiz, s Standing, grade *Result) View {
	v := View{Public: q.Public(), Attempt: s.Used, Attempts: s.Allowed, Final: s.Final()}
	if grade != nil {
		g := grade.Disclose(s.Final())
		v.Grade = &g
	}
	return v
}
