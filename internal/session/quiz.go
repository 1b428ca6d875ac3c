package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/store"
)

// The quiz rules, the same for every front end:
//   - a session takes its lab's quiz and no other; a quiz no lab names
//     (course-wide) is taken without a session and recorded nowhere;
//   - a submission answers every question;
//   - a learner's submissions of a quiz are graded until its attempts
//     (quiz.Quiz.AttemptsAllowed) are used or one is perfect, counted over
//     all their sessions, since a new session of the lab is not a new
//     quiz; each graded one replaces the grade, and later ones are kept on
//     the timeline and change nothing;
//   - expected answers and explanations are shown once the grade is
//     final, of the answered questions only (quiz.Result.Disclose).

// ErrWrongQuiz: the quiz asked for is not the one the session takes.
var ErrWrongQuiz = errors.New("not this session's quiz")

// quizEvent is the detail of a quiz event: QuizData, and whether the
// submission was graded. It never holds the expected answers: the
// timeline reaches the page before the grade is final.
type quizEvent struct {
	QuizData
	Attempt int  `json:"attempt"` // graded attempts used after it
	Graded  bool `json:"graded"`
}

// quizRecord is the data of a quiz's stored result: the graded
// submission that counts, whole, so that it can be shown again (with
// the cluster's answers as they were) once the grade is final.
type quizRecord struct {
	QuizData
	Attempt   int                   `json:"attempt"`
	Questions []quiz.QuestionResult `json:"questions,omitempty"`
}

// quizOf returns the quiz a session of lab labID takes: the lab's own.
func (m *Manager) quizOf(labID string) (*quiz.Quiz, error) {
	l, err := m.Lab(labID)
	if err != nil {
		return nil, err
	}
	return m.o.Course.Quiz(l.Quiz)
}

// quizLabs returns the labs whose sessions take quiz id; none for a
// course-wide quiz.
func (m *Manager) quizLabs(id string) []string {
	var out []string
	for _, l := range m.o.Course.Labs() {
		if l.Quiz == id {
			out = append(out, l.ID)
		}
	}
	return out
}

// QuizView returns the quiz session id takes, as its learner may see it:
// the questions without their answers, the attempts used and allowed, and
// the grade that counts so far.
func (m *Manager) QuizView(ctx context.Context, id string) (*quiz.View, error) {
	rec, err := m.record(ctx, id)
	if err != nil {
		return nil, err
	}
	q, err := m.quizOf(rec.Lab)
	if err != nil {
		return nil, err
	}
	st, grade, err := m.standing(ctx, rec.Learner, q)
	if err != nil {
		return nil, err
	}
	v := quiz.NewView(q, st, grade)
	return &v, nil
}

// Quiz grades a submission of the quiz session id takes (quizID names it,
// or is empty), records it on the session's timeline and, while it is
// graded, as the session's quiz result; see the rules above. Cluster
// questions are checked against the session's cluster while it exists;
// once it was deleted they count as not correct.
//
// Nothing is recorded when the answers are refused: an unknown quiz
// (course.ErrUnknownQuiz), another quiz than the session's
// (ErrWrongQuiz), answers that are not answers to its questions or leave
// one out (quiz.ErrBadAnswer).
func (m *Manager) Quiz(ctx context.Context, id, quizID string, answers quiz.Answers) (*quiz.Outcome, error) {
	rec, err := m.record(ctx, id)
	if err != nil {
		return nil, err
	}
	q, err := m.quizOf(rec.Lab)
	if err != nil {
		return nil, err
	}
	if quizID != "" && quizID != q.ID {
		if _, err := m.o.Course.Quiz(quizID); err != nil {
			return nil, err
		}
		return nil, wrongQuiz(id, rec.Lab, q.ID, quizID)
	}
	if err := q.CheckSubmission(answers); err != nil {
		return nil, fmt.Errorf("quiz %s: %w", q.ID, err)
	}
	// The learner's lock first, then the session's: two submissions in
	// two sessions must not both be the first.
	unlockQuiz, err := m.lock(ctx, quizLockID(rec.Learner, q.ID))
	if err != nil {
		return nil, err
	}
	defer unlockQuiz()
	unlock, err := m.lock(ctx, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	s, err := m.load(ctx, id)
	if err == nil {
		err = m.settle(ctx, s, nil, true)
	}
	if err == nil {
		// Cluster questions are checked against the cluster.
		m.seen(ctx, id)
		err = m.wakeLocked(ctx, s, nil)
	}
	if err != nil {
		return nil, err
	}
	st, grade, err := m.standing(ctx, rec.Learner, q)
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
	next, graded := st.Submit(res.Correct == res.Total)
	data := QuizData{Quiz: q.ID, Answers: answers, Correct: res.Correct, Total: res.Total}
	msg := fmt.Sprintf("quiz %s answered: attempt %d of %d, %d of %d correct", q.ID, next.Used, next.Allowed, res.Correct, res.Total)
	if !graded {
		msg = fmt.Sprintf("quiz %s answered again after its grade was final (%d of %d correct, not graded)", q.ID, res.Correct, res.Total)
	}
	ev := newEvent(KindQuiz, "", msg, quizEvent{QuizData: data, Attempt: next.Used, Graded: graded})
	ctx = context.WithoutCancel(ctx)
	if graded {
		body, err := json.Marshal(quizRecord{QuizData: data, Attempt: next.Used, Questions: res.Questions})
		if err != nil {
			return nil, fmt.Errorf("session %s: record quiz %s: %w", id, q.ID, err)
		}
		r := &store.Result{SessionID: id, Kind: store.ResultQuiz, Item: q.ID, Score: res.Correct, Total: res.Total,
			Passed: res.Correct == res.Total, Data: body}
		if err := m.o.Store.PutResult(ctx, r); err != nil {
			return nil, err
		}
		grade = &res
	}
	if err := m.o.Store.AppendEvents(ctx, id, ev); err != nil {
		return nil, err
	}
	out := quiz.NewOutcome(*grade, next, graded)
	return &out, nil
}

// GradeQuiz grades a submission of a course-wide quiz, which is taken
// without a session: cluster questions count as not correct, nothing is
// recorded, and the result is final at once (there is no grade to keep).
// A lab's quiz is refused (ErrWrongQuiz): it is graded in a session of
// its lab. Other errors are as in Quiz.
func (m *Manager) GradeQuiz(ctx context.Context, quizID string, answers quiz.Answers) (*quiz.Outcome, error) {
	q, err := m.o.Course.Quiz(quizID)
	if err != nil {
		return nil, err
	}
	if labs := m.quizLabs(q.ID); len(labs) > 0 {
		return nil, fmt.Errorf("%w: quiz %s is graded in a session of lab %s", ErrWrongQuiz, q.ID, labs[0])
	}
	if err := q.CheckSubmission(answers); err != nil {
		return nil, fmt.Errorf("quiz %s: %w", q.ID, err)
	}
	res, err := quiz.Grade(ctx, q, answers, nil)
	if err != nil {
		return nil, err
	}
	out := quiz.NewOutcome(res, quiz.Standing{Used: 1, Allowed: 1}, true)
	return &out, nil
}

// QuizSession returns the session a learner's submission of quiz quizID
// is recorded with. With id, that session: ErrNotFound unless it is the
// learner's, ErrWrongQuiz unless it takes the quiz. Without, the
// learner's active session if it takes the quiz, else their newest one
// that does: ErrNoSession, naming the lab to start, when none does. A
// course-wide quiz is recorded with no session: "" (and ErrWrongQuiz
// when id is given).
func (m *Manager) QuizSession(ctx context.Context, learner, id, quizID string) (string, error) {
	q, err := m.o.Course.Quiz(quizID)
	if err != nil {
		return "", err
	}
	labs := m.quizLabs(q.ID)
	if id != "" {
		if _, err := m.Resolve(ctx, learner, "", id); err != nil {
			return "", err
		}
		rec, err := m.record(ctx, id)
		if err != nil {
			return "", err
		}
		if !slices.Contains(labs, rec.Lab) {
			own, err := m.quizOf(rec.Lab)
			if err != nil {
				return "", err
			}
			return "", wrongQuiz(id, rec.Lab, own.ID, q.ID)
		}
		return id, nil
	}
	if len(labs) == 0 {
		return "", nil
	}
	if err := m.Heal(ctx, learner); err != nil {
		return "", err
	}
	list, err := m.o.Store.Sessions(ctx, store.Filter{Learner: learner}) // newest first
	if err != nil {
		return "", err
	}
	newest := ""
	for _, rec := range list {
		if !slices.Contains(labs, rec.Lab) {
			continue
		}
		if State(rec.State).Active() {
			return rec.ID, nil
		}
		if newest == "" {
			newest = rec.ID
		}
	}
	if newest == "" {
		return "", fmt.Errorf("%w of lab %s: quiz %s is taken in a session of its lab; start the lab first", ErrNoSession, labs[0], q.ID)
	}
	return newest, nil
}

func wrongQuiz(id, labID, own, asked string) error {
	return fmt.Errorf("%w: session %s is of lab %s, whose quiz is %s, not %s", ErrWrongQuiz, id, labID, own, asked)
}

// standing returns where learner stands with quiz q over all their
// sessions, and the grade that counts (nil before the first graded
// submission): the stored result with the most attempts used.
func (m *Manager) standing(ctx context.Context, learner string, q *quiz.Quiz) (quiz.Standing, *quiz.Result, error) {
	st := quiz.Standing{Allowed: q.AttemptsAllowed()}
	list, err := m.o.Store.Sessions(ctx, store.Filter{Learner: learner})
	if err != nil {
		return st, nil, err
	}
	var grade *quiz.Result
	var at time.Time
	for _, s := range list {
		rs, err := m.o.Store.Results(ctx, s.ID)
		if err != nil {
			return st, nil, err
		}
		for _, r := range rs {
			if r.Kind != store.ResultQuiz || r.Item != q.ID {
				continue
			}
			var rec quizRecord
			// A result an older oplab stored has no attempt: it was one.
			_ = json.Unmarshal(r.Data, &rec)
			n := max(rec.Attempt, 1)
			if n > st.Used || n == st.Used && r.At.After(at) {
				st.Used, at = n, r.At
				grade = &quiz.Result{QuizID: q.ID, Correct: r.Score, Total: r.Total, Questions: rec.Questions}
			}
		}
	}
	st.Perfect = grade != nil && grade.Total > 0 && grade.Correct == grade.Total
	return st, grade, nil
}

// quizLockID names the lock that serialises a learner's submissions of a
// quiz; hashed, since it names a file and a learner's id is theirs.
func quizLockID(learner, quizID string) string {
	h := sha256.Sum256([]byte(learner + "\x00" + quizID))
	return "quiz-" + hex.EncodeToString(h[:12])
}

// hasCluster reports whether the session's cluster exists.
func (m *Manager) hasCluster(s *live) bool {
	if s.state() == Provisioning {
		return false
	}
	p, err := m.providerOf(s.rec.Provider)
	if err != nil {
		return false
	}
	_, err = p.KubeconfigPath(s.rec.Cluster)
	return err == nil
}
