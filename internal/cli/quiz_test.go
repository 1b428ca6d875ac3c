package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/store"
)

// TestAsk answers a quiz from a script, with one answer that is not one;
// input that ends early is an error.
func TestAsk(t *testing.T) {
	t.Parallel()
	q := &quiz.Quiz{ID: "q", Questions: []quiz.Question{
		{ID: "one", Type: quiz.Single, Prompt: locale.Text{En: "First?", Ko: "첫째?"}, Choices: []quiz.Choice{{ID: "a", Text: locale.Text{En: "A"}}, {ID: "b", Text: locale.Text{En: "B"}}}},
		{ID: "two", Type: quiz.Cluster, Prompt: locale.Text{En: "Primary?"}},
	}}
	var out strings.Builder
	answers, err := ask(&out, style{}, bufio.NewReader(strings.NewReader("x\nb\nprod-db-2")), q, locale.Ko)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(answers["one"], ",") != "b" || strings.Join(answers["two"], ",") != "prod-db-2" {
		t.Errorf("answers: got %v, want one=b, two=prod-db-2", answers)
	}
	for _, want := range []string{"1. 첫째?", "a) A", `"x" is not a choice`, "2. Primary?"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("prompts lack %q:\n%s", want, out.String())
		}
	}
	if _, err := ask(&out, style{}, bufio.NewReader(strings.NewReader("a\n")), q, locale.En); err == nil || !strings.Contains(err.Error(), "question 2 of 2") {
		t.Errorf("input ending early: got %v, want an error naming question 2 of 2", err)
	}
}

// runQuiz executes the oplab command line with stdin as its input, and
// returns what it wrote to each stream.
func runQuiz(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = Run(t.Context(), Streams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), err
}

// quizStore is the store under a data directory, with sessions of the
// person at this machine seeded in it.
type quizStore struct {
	*store.DB
	data string
}

func newQuizStore(t *testing.T) *quizStore {
	t.Helper()
	data := t.TempDir()
	st, err := store.OpenDir(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &quizStore{DB: st, data: data}
}

func (s *quizStore) seed(t *testing.T, id, lab, state string, created time.Time) {
	t.Helper()
	rec := &store.Session{ID: id, Learner: offlineLearner, Lab: lab, Cluster: id, Provider: "embedded", State: state, Lang: "en", Data: []byte("{}"), Created: created}
	if err := s.CreateSession(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
}

// quizRecord is what the store holds of a session's quiz: its results and
// its quiz events.
func (s *quizStore) quizRecord(t *testing.T, id string) (results []store.Result, events []store.Event) {
	t.Helper()
	rs, err := s.Results(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Kind == store.ResultQuiz {
			results = append(results, r)
		}
	}
	evs, err := s.Events(t.Context(), id, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Kind == "quiz" {
			events = append(events, ev)
		}
	}
	return results, events
}

// typed is what a learner types to answer q: the right letters, except a
// wrong one for the questions in wrong; prod-db-1 for cluster questions.
func typed(q *quiz.Quiz, wrong ...string) string {
	var lines []string
	for _, qq := range q.Questions {
		var picks []string
		for _, c := range qq.Choices {
			if c.Correct != slices.Contains(wrong, qq.ID) {
				picks = append(picks, c.ID)
			}
		}
		if qq.Type == quiz.Cluster {
			picks = []string{"prod-db-1"}
		} else if slices.Contains(wrong, qq.ID) {
			picks = picks[:1]
		}
		lines = append(lines, strings.Join(picks, ","))
	}
	return strings.Join(lines, "\n") + "\n"
}

// quizOutput is `oplab quiz -o json`'s answer.
type quizOutput struct {
	Session string       `json:"session"`
	Result  quiz.Outcome `json:"result"`
}

// TestQuizGradedOnce drives `oplab quiz` as a learner would, on a real
// store: answers that end early record and show nothing; the first whole
// submission is the grade, with the answers shown; a second one is kept
// on the timeline and changes nothing.
func TestQuizGradedOnce(t *testing.T) {
	st := newQuizStore(t)
	st.seed(t, "fo", "failover", "completed", time.Now().Add(-time.Minute))
	q, err := loadQuiz(t, "failover")
	if err != nil {
		t.Fatal(err)
	}
	flags := []string{"--data-dir", st.data, "--bin-dir", t.TempDir()}
	first := q.Questions[0].ID

	out, errOut, err := runQuiz(t, "", append([]string{"quiz", "failover"}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), "nothing was recorded") {
		t.Errorf("no answers: got %v, want an error saying nothing was recorded", err)
	}
	if strings.Contains(out+errOut, "the answer:") || strings.Contains(out+errOut, strings.TrimSpace(q.Questions[0].Explanation.En)) {
		t.Errorf("no answers: the output shows answers:\n%s%s", out, errOut)
	}
	if rs, evs := st.quizRecord(t, "fo"); len(rs) != 0 || len(evs) != 0 {
		t.Fatalf("no answers: got results %+v, events %d; want nothing recorded", rs, len(evs))
	}

	out, _, err = runQuiz(t, typed(q, first), append([]string{"quiz", "failover", "-o", "json"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	var got quizOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	grade := got.Result.Correct
	if got.Session != "fo" || !got.Result.Graded || !got.Result.Final || got.Result.Questions[0].Correct || len(got.Result.Questions[0].Expected) == 0 {
		t.Errorf("first submission: got %+v, want session fo, graded, final, %s wrong with its answer shown", got, first)
	}

	out, _, err = runQuiz(t, typed(q), append([]string{"quiz", "failover"}, flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Your grade of this quiz is final", "Not graded: your grade was already final", fmt.Sprintf("Score %d/%d (final, attempt 1 of 1)", grade, len(q.Questions))} {
		if !strings.Contains(out, want) {
			t.Errorf("second submission: output lacks %q:\n%s", want, out)
		}
	}
	rs, evs := st.quizRecord(t, "fo")
	if len(rs) != 1 || rs[0].Score != grade || len(evs) != 2 || !strings.Contains(evs[1].Message, "not graded") {
		t.Errorf("after two submissions: got results %+v and %d events; want the first grade %d and both submissions on the timeline", rs, len(evs), grade)
	}
}

// TestQuizWrongSession: `oplab quiz rbac` during a failover session is
// not recorded on it: refused with what to do, nothing recorded.
func TestQuizWrongSession(t *testing.T) {
	st := newQuizStore(t)
	st.seed(t, "fo", "failover", "ready", time.Now())
	q, err := loadQuiz(t, "rbac")
	if err != nil {
		t.Fatal(err)
	}
	flags := []string{"--data-dir", st.data, "--bin-dir", t.TempDir()}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"the active session is another lab's", []string{"quiz", "rbac"}, "no active session of lab rbac: quiz rbac is taken in a session of its lab; start the lab first (oplab lab start ID)"},
		{"named session of another lab", []string{"quiz", "rbac", "--session", "fo"}, "session fo is of lab failover, whose quiz is failover, not rbac; pick a session of the quiz's lab with --session"},
	}
	for _, tt := range tests {
		_, _, err := runQuiz(t, typed(q), append(tt.args, flags...)...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	if rs, evs := st.quizRecord(t, "fo"); len(rs) != 0 || len(evs) != 0 {
		t.Errorf("the failover session: got results %+v, %d events; want nothing recorded", rs, len(evs))
	}
}

func loadQuiz(t *testing.T, id string) (*quiz.Quiz, error) {
	t.Helper()
	q, errs := quiz.Load(course.Embedded().Quizzes, id)
	return q, errors.Join(errs...)
}
