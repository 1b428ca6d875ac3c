package session

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/store"
)

// answersFor answers every question of q: the right choices except for
// the questions in wrong, which get a wrong one; cluster questions get
// prod-db-1 (not checkable without a cluster, so not correct).
func answersFor(q *quiz.Quiz, wrong ...string) quiz.Answers {
	a := quiz.Answers{}
	for _, qq := range q.Questions {
		if qq.Type == quiz.Cluster {
			a[qq.ID] = []string{"prod-db-1"}
			continue
		}
		for _, c := range qq.Choices {
			if c.Correct != slices.Contains(wrong, qq.ID) {
				a[qq.ID] = append(a[qq.ID], c.ID)
				if slices.Contains(wrong, qq.ID) {
					break
				}
			}
		}
	}
	return a
}

// seedAs stores a session of learner, created at the given time.
func (f *fixture) seedAs(t *testing.T, id, learner, lab string, state State, created time.Time) {
	t.Helper()
	rec := &store.Session{ID: id, Learner: learner, Lab: lab, Cluster: id, Provider: "embedded", State: string(state), Lang: "en", Data: []byte("{}"), Created: created}
	if err := f.store.CreateSession(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
}

// quizEvents returns the quiz events of session id, decoded.
func (f *fixture) quizEvents(t *testing.T, id string) []quizEvent {
	t.Helper()
	evs, err := f.store.Events(t.Context(), id, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []quizEvent
	for _, ev := range evs {
		if ev.Kind != KindQuiz {
			continue
		}
		if strings.Contains(string(ev.Data), "expected") || strings.Contains(string(ev.Data), "explanation") {
			t.Errorf("quiz event of %s carries answers: %s", id, ev.Data)
		}
		var d quizEvent
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// quizResults returns session id's stored quiz results.
func (f *fixture) quizResults(t *testing.T, id string) []store.Result {
	t.Helper()
	rs, err := f.store.Results(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.Result
	for _, r := range rs {
		if r.Kind == store.ResultQuiz {
			out = append(out, r)
		}
	}
	return out
}

// shown reports whether an outcome or view shows any expected answer or
// explanation.
func shown(t *testing.T, v any) bool {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), `"expected"`) || strings.Contains(string(b), `"explanation"`)
}

// TestQuiz grades a quiz for a session whose cluster is gone: choice
// questions are graded, cluster questions cannot be checked, and the
// answers and score are kept. The first submission is final: the answers
// and explanations come with it.
func TestQuiz(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	q, err := shippedCourse(t).Quiz("failover")
	if err != nil {
		t.Fatal(err)
	}
	f.seed(t, "s", "failover", Expired, 0, nil)
	wantCorrect, clusterQs := 0, 0
	for _, qq := range q.Questions {
		if qq.Type == quiz.Cluster {
			clusterQs++
		} else {
			wantCorrect++
		}
	}
	if clusterQs == 0 {
		t.Fatal("the failover quiz has no cluster question; this test needs one")
	}
	out, err := f.m.Quiz(ctx, "s", "failover", answersFor(q))
	if err != nil {
		t.Fatal(err)
	}
	if out.Correct != wantCorrect || out.Total != len(q.Questions) || !out.Graded || !out.Final || out.Attempt != 1 || out.Attempts != 1 {
		t.Errorf("outcome: got %d/%d attempt %d of %d graded=%v final=%v, want %d/%d, attempt 1 of 1, graded and final",
			out.Correct, out.Total, out.Attempt, out.Attempts, out.Graded, out.Final, wantCorrect, len(q.Questions))
	}
	for _, qr := range out.Questions {
		if qr.Explanation.En == "" || qr.Error == "" && len(qr.Expected) == 0 {
			t.Errorf("final outcome, %s: got expected %v, explanation %q; want both (or the error)", qr.ID, qr.Expected, qr.Explanation.En)
		}
	}
	rs := f.quizResults(t, "s")
	if len(rs) != 1 || rs[0].Score != wantCorrect || rs[0].Passed {
		t.Errorf("stored result: got %+v, want quiz %d/%d not passed", rs, wantCorrect, len(q.Questions))
	}
	if evs := f.quizEvents(t, "s"); len(evs) != 1 || len(evs[0].Answers) != len(q.Questions) || !evs[0].Graded || evs[0].Attempt != 1 {
		t.Errorf("quiz events: got %+v, want one graded, with every answer", evs)
	}
}

// TestQuizRefusesSubmissions: an unknown quiz, another quiz than the
// session's, answers to questions the quiz does not have, choices it
// does not offer, and an empty or partial submission are errors, and
// nothing is recorded or shown.
func TestQuizRefusesSubmissions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	f.seed(t, "s", "failover", Completed, 2, nil)
	q, _ := shippedCourse(t).Quiz("failover")
	rbac, _ := shippedCourse(t).Quiz("rbac")
	first, second := q.Questions[0].ID, q.Questions[1].ID
	partial := answersFor(q)
	delete(partial, second)
	tests := []struct {
		name    string
		quiz    string
		answers quiz.Answers
		want    string
		is      error
	}{
		{"unknown quiz", "nope", quiz.Answers{}, `unknown quiz "nope"`, course.ErrUnknownQuiz},
		{"another lab's quiz", "rbac", answersFor(rbac), "session s is of lab failover, whose quiz is failover, not rbac", ErrWrongQuiz},
		{"unknown question", "failover", quiz.Answers{"nope": {"a"}}, `no question "nope"`, quiz.ErrBadAnswer},
		{"unknown choice", "failover", quiz.Answers{first: {"zz"}}, `"zz" is not a choice`, quiz.ErrBadAnswer},
		{"empty", "failover", quiz.Answers{}, "answer every question", quiz.ErrBadAnswer},
		{"empty, the session's quiz by default", "", quiz.Answers{}, "answer every question", quiz.ErrBadAnswer},
		{"partial", "failover", partial, "1 of " + strconv.Itoa(len(q.Questions)) + " not answered: " + second, quiz.ErrBadAnswer},
	}
	for _, tt := range tests {
		out, err := f.m.Quiz(ctx, "s", tt.quiz, tt.answers)
		if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) || out != nil {
			t.Errorf("%s: got %v, %v; want no outcome and an error containing %q", tt.name, out, err, tt.want)
		}
	}
	// Without a session only a course-wide quiz is graded.
	if _, err := f.m.GradeQuiz(ctx, "failover", answersFor(q)); !errors.Is(err, ErrWrongQuiz) || !strings.Contains(err.Error(), "graded in a session of lab failover") {
		t.Errorf("a lab's quiz without a session: got %v, want ErrWrongQuiz", err)
	}
	if rs := f.quizResults(t, "s"); len(rs) != 0 {
		t.Errorf("results after refused answers: got %+v, want none", rs)
	}
	if evs, _ := f.store.Events(ctx, "s", 0, 1000); len(evs) != 0 {
		t.Errorf("events after refused answers: got %+v, want none", evs)
	}
	if v, err := f.m.QuizView(ctx, "s"); err != nil || v.Attempt != 0 || v.Final || v.Grade != nil || shown(t, v) {
		t.Errorf("view after refused answers: got %+v, %v; want attempt 0, no grade, no answers", v, err)
	}
}

// TestQuizGradedOnce: the first submission is the grade. A second one,
// in the same session or in a new session of the lab, is kept on the
// timeline and changes neither the stored result nor what is shown;
// another learner's standing is their own.
func TestQuizGradedOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	q, _ := shippedCourse(t).Quiz("failover")
	now := time.Now().UTC()
	f.seedAs(t, "s1", "alice", "failover", Completed, now.Add(-time.Hour))
	first := q.Questions[0].ID
	out, err := f.m.Quiz(ctx, "s1", "", answersFor(q, first))
	if err != nil {
		t.Fatal(err)
	}
	grade := out.Correct
	if !out.Graded || !out.Final || out.Questions[0].Correct {
		t.Fatalf("first submission: got %+v, want graded, final, %s wrong", out, first)
	}

	again, err := f.m.Quiz(ctx, "s1", "failover", answersFor(q))
	if err != nil {
		t.Fatal(err)
	}
	if again.Graded || !again.Final || again.Correct != grade || again.Questions[0].Correct || again.Attempt != 1 {
		t.Errorf("second submission: got graded=%v final=%v %d correct, %s correct=%v, attempt %d; want not graded, the first grade %d standing",
			again.Graded, again.Final, again.Correct, first, again.Questions[0].Correct, again.Attempt, grade)
	}
	if rs := f.quizResults(t, "s1"); len(rs) != 1 || rs[0].Score != grade {
		t.Errorf("stored result after a second submission: got %+v, want the first's score %d", rs, grade)
	}
	evs := f.quizEvents(t, "s1")
	if len(evs) != 2 || !evs[0].Graded || evs[1].Graded || evs[1].Correct != grade+1 {
		t.Errorf("timeline: got %+v, want the graded submission and the later one (%d correct) not graded", evs, grade+1)
	}

	// A new session of the lab is not a new quiz.
	f.seedAs(t, "s2", "alice", "failover", Ready, now)
	v, err := f.m.QuizView(ctx, "s2")
	if err != nil || !v.Final || v.Grade == nil || v.Grade.Correct != grade {
		t.Errorf("view in a new session: got %+v, %v; want the final grade %d", v, err, grade)
	}
	out, err = f.m.Quiz(ctx, "s2", "", answersFor(q))
	if err != nil || out.Graded || out.Correct != grade {
		t.Errorf("submission in a new session: got %+v, %v; want not graded, grade %d", out, err, grade)
	}
	if rs := f.quizResults(t, "s2"); len(rs) != 0 {
		t.Errorf("results of the new session: got %+v, want none", rs)
	}
	if evs := f.quizEvents(t, "s2"); len(evs) != 1 || evs[0].Graded {
		t.Errorf("timeline of the new session: got %+v, want one submission, not graded", evs)
	}

	f.seedAs(t, "b1", "bob", "failover", Completed, now)
	if v, err := f.m.QuizView(ctx, "b1"); err != nil || v.Final || v.Grade != nil || v.Attempt != 0 {
		t.Errorf("bob's view: got %+v, %v; want no attempt used", v, err)
	}
}

// attemptsQuiz is a failover quiz of two single-choice questions that
// allows two graded attempts.
const attemptsQuiz = `apiVersion: oplab.dev/v1alpha1
kind: Quiz
id: failover
lab: failover
attempts: 2
title: {en: Failover, ko: 페일오버}
questions:
- id: one
  type: single
  prompt: {en: "One?", ko: "하나?"}
  choices:
  - {id: a, text: {en: A, ko: A}, correct: true}
  - {id: b, text: {en: B, ko: B}}
  explanation: {en: SECRET-ONE, ko: SECRET-ONE}
- id: two
  type: single
  prompt: {en: "Two?", ko: "둘?"}
  choices:
  - {id: a, text: {en: A, ko: A}}
  - {id: b, text: {en: B, ko: B}, correct: true}
  explanation: {en: SECRET-TWO, ko: SECRET-TWO}
`

// newQuizFixture is a fixture whose course has quizYAML as the failover
// lab's quiz.
func newQuizFixture(t *testing.T, quizYAML string) *fixture {
	t.Helper()
	src := course.Embedded()
	quizzes := fstest.MapFS{}
	err := fs.WalkDir(src.Quizzes, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src.Quizzes, p)
		quizzes[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	quizzes["failover.yaml"] = &fstest.MapFile{Data: []byte(quizYAML)}
	src.Quizzes = quizzes
	c, err := course.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m, err := New(Options{Store: st, Course: c})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{m: m, store: st}
}

// TestQuizAttempts: a quiz of two attempts grades two submissions, shows
// no answers after the first, shows them after the second and grades no
// third; a perfect first submission is final at once.
func TestQuizAttempts(t *testing.T) {
	t.Parallel()
	f := newQuizFixture(t, attemptsQuiz)
	ctx := t.Context()
	now := time.Now().UTC()
	f.seedAs(t, "s", "alice", "failover", Completed, now)
	steps := []struct {
		name                    string
		answers                 quiz.Answers
		wantCorrect, wantStored int
		graded, final, shown    bool
		attempt                 int
	}{
		{"first", quiz.Answers{"one": {"b"}, "two": {"b"}}, 1, 1, true, false, false, 1},
		{"second", quiz.Answers{"one": {"b"}, "two": {"a"}}, 0, 0, true, true, true, 2},
		{"third, all right", quiz.Answers{"one": {"a"}, "two": {"b"}}, 0, 0, false, true, true, 2},
	}
	for _, st := range steps {
		out, err := f.m.Quiz(ctx, "s", "failover", st.answers)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if out.Correct != st.wantCorrect || out.Graded != st.graded || out.Final != st.final || shown(t, out) != st.shown || out.Attempt != st.attempt || out.Attempts != 2 {
			t.Errorf("%s: got %d correct, graded=%v final=%v shown=%v attempt %d of %d; want %d, %v, %v, %v, attempt %d of 2",
				st.name, out.Correct, out.Graded, out.Final, shown(t, out), out.Attempt, out.Attempts, st.wantCorrect, st.graded, st.final, st.shown, st.attempt)
		}
		v, err := f.m.QuizView(ctx, "s")
		if err != nil || v.Grade == nil || v.Grade.Correct != st.wantStored || v.Final != st.final || shown(t, v) != st.shown {
			t.Errorf("%s: view got %+v, %v; want grade %d, final=%v, shown=%v", st.name, v, err, st.wantStored, st.final, st.shown)
		}
		if rs := f.quizResults(t, "s"); len(rs) != 1 || rs[0].Score != st.wantStored {
			t.Errorf("%s: stored results got %+v, want one of score %d", st.name, rs, st.wantStored)
		}
	}

	f.seedAs(t, "p", "pat", "failover", Completed, now)
	out, err := f.m.Quiz(ctx, "p", "", quiz.Answers{"one": {"a"}, "two": {"b"}})
	if err != nil || !out.Graded || !out.Final || out.Attempt != 1 || out.Correct != 2 || !shown(t, out) {
		t.Errorf("a perfect first submission: got %+v, %v; want graded, final at attempt 1 of 2, answers shown", out, err)
	}
	if out, err := f.m.Quiz(ctx, "p", "", quiz.Answers{"one": {"b"}, "two": {"a"}}); err != nil || out.Graded || out.Correct != 2 {
		t.Errorf("after a perfect submission: got %+v, %v; want not graded, the grade 2 standing", out, err)
	}
}

// TestQuizSession: which session a learner's quiz is recorded with: the
// one of its lab, active first; a session of another lab is refused; a
// course-wide quiz has none.
func TestQuizSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	now := time.Now().UTC()
	f.seedAs(t, "fo-old", "alice", "failover", Expired, now.Add(-3*time.Hour))
	f.seedAs(t, "fo-new", "alice", "failover", Completed, now.Add(-2*time.Hour))
	f.seedAs(t, "rb", "alice", "rbac", Ready, now.Add(-time.Hour))
	f.seedAs(t, "bobs", "bob", "quota", Ready, now)
	tests := []struct {
		name, id, quiz string
		want           string
		is             error
		msg            string
	}{
		{"the newest of its lab, though another is active", "", "failover", "fo-new", nil, ""},
		{"the active one of its lab", "", "rbac", "rb", nil, ""},
		{"named, of its lab", "fo-old", "failover", "fo-old", nil, ""},
		{"named, of another lab", "rb", "failover", "", ErrWrongQuiz, "session rb is of lab rbac, whose quiz is rbac, not failover"},
		{"no session of its lab", "", "quota", "", ErrNoSession, "of lab quota"},
		{"another learner's", "bobs", "quota", "", ErrNotFound, ""},
		{"course-wide", "", "course", "", nil, ""},
		{"course-wide in a session", "rb", "course", "", ErrWrongQuiz, "not course"},
		{"unknown quiz", "", "nope", "", course.ErrUnknownQuiz, ""},
	}
	for _, tt := range tests {
		got, err := f.m.QuizSession(ctx, "alice", tt.id, tt.quiz)
		if got != tt.want || !errors.Is(err, tt.is) || err != nil && !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: got %q, %v; want %q, %v containing %q", tt.name, got, err, tt.want, tt.is, tt.msg)
		}
	}
}

// TestGradeQuizCourseWide: the course-wide quiz is graded without a
// session, final at once, and must be answered whole.
func TestGradeQuizCourseWide(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	q, err := shippedCourse(t).Quiz("course")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.GradeQuiz(t.Context(), "course", quiz.Answers{}); !errors.Is(err, quiz.ErrBadAnswer) {
		t.Errorf("empty: got %v, want ErrBadAnswer", err)
	}
	want := 0
	for _, qq := range q.Questions {
		if qq.Type != quiz.Cluster {
			want++
		}
	}
	out, err := f.m.GradeQuiz(t.Context(), "course", answersFor(q))
	if err != nil || !out.Final || out.Correct != want || !shown(t, out) {
		t.Errorf("whole: got %+v, %v; want final, %d correct (every choice question), answers shown", out, err, want)
	}
}

// TestQuizConcurrentSubmissions: submissions sent at once, in two
// sessions of the same learner, are graded once between them.
func TestQuizConcurrentSubmissions(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	q, _ := shippedCourse(t).Quiz("failover")
	now := time.Now().UTC()
	ids := []string{"a1", "a2", "a1", "a2", "a1", "a2"}
	f.seedAs(t, "a1", "alice", "failover", Expired, now.Add(-time.Hour))
	f.seedAs(t, "a2", "alice", "failover", Completed, now)
	graded := make(chan bool, len(ids))
	errs := make(chan error, len(ids))
	for _, id := range ids {
		go func() {
			out, err := f.m.Quiz(ctx, id, "", answersFor(q))
			if err != nil {
				errs <- err
				return
			}
			graded <- out.Graded
		}()
	}
	n := 0
	for range ids {
		select {
		case err := <-errs:
			t.Error(err)
		case g := <-graded:
			if g {
				n++
			}
		}
	}
	results := len(f.quizResults(t, "a1")) + len(f.quizResults(t, "a2"))
	events := len(f.quizEvents(t, "a1")) + len(f.quizEvents(t, "a2"))
	if n != 1 || results != 1 || events != len(ids) {
		t.Errorf("got %d graded, %d results, %d events; want 1 graded, 1 result, %d events", n, results, events, len(ids))
	}
}
