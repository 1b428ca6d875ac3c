package webapp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/store"
)

// TestQuizReachesTheServer: the page's quiz, on a real store, follows the
// application's rules. An empty or partial submission is refused as
// ErrInvalid and records and shows nothing; answers to another quiz's
// questions are refused; the first whole submission is the grade, with
// the answers shown; a second one is kept on the timeline and does not
// change the grade.
func TestQuizReachesTheServer(t *testing.T) {
	ctx := t.Context()
	data := t.TempDir()
	a, err := app.Open(ctx, app.Config{DataDir: data, BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	w, err := New(ctx, a, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	st, err := store.OpenDir(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateSession(ctx, &store.Session{ID: "fo", Learner: "alice", Lab: "failover", Cluster: "fo", Provider: "embedded",
		State: "completed", Lang: "en", Data: []byte("{}"), Created: time.Now()}); err != nil {
		t.Fatal(err)
	}
	q, err := a.Quiz("failover")
	if err != nil {
		t.Fatal(err)
	}
	rbac, err := a.Quiz("rbac")
	if err != nil {
		t.Fatal(err)
	}
	whole := func(wrong string) quiz.Answers {
		out := quiz.Answers{}
		for _, qq := range q.Questions {
			if qq.Type == quiz.Cluster {
				out[qq.ID] = []string{"prod-db-1"}
				continue
			}
			for _, c := range qq.Choices {
				if c.Correct != (qq.ID == wrong) {
					out[qq.ID] = append(out[qq.ID], c.ID)
					if qq.ID == wrong {
						break
					}
				}
			}
		}
		return out
	}
	shows := func(v any) bool {
		b, _ := json.Marshal(v)
		return strings.Contains(string(b), `"expected"`) || strings.Contains(string(b), `"explanation"`)
	}
	recorded := func() (results, events int) {
		rs, _ := st.Results(ctx, "fo")
		evs, _ := st.Events(ctx, "fo", 0, 1000)
		for _, ev := range evs {
			if ev.Kind == "quiz" {
				events++
			}
		}
		return len(rs), events
	}

	partial := whole("")
	delete(partial, q.Questions[0].ID)
	rbacAnswers := quiz.Answers{rbac.Questions[0].ID: {"a"}}
	for name, answers := range map[string]quiz.Answers{"empty": {}, "nil": nil, "partial": partial, "another quiz's": rbacAnswers} {
		out, err := w.Answer(ctx, "fo", answers)
		if !errors.Is(err, server.ErrInvalid) || out != nil {
			t.Errorf("%s submission: got %+v, %v; want ErrInvalid and nothing shown", name, out, err)
		}
	}
	if rs, evs := recorded(); rs != 0 || evs != 0 {
		t.Fatalf("after refused submissions: got %d results, %d events; want none", rs, evs)
	}
	v, err := w.Quiz(ctx, "fo")
	if err != nil || v.ID != "failover" || v.Final || v.Grade != nil || shows(v) {
		t.Fatalf("before: got %+v, %v; want the failover quiz, no grade, no answers", v, err)
	}

	first := q.Questions[0].ID
	out, err := w.Answer(ctx, "fo", whole(first))
	if err != nil {
		t.Fatal(err)
	}
	grade := out.Correct
	if !out.Graded || !out.Final || out.Questions[0].Correct || len(out.Questions[0].Expected) == 0 || out.Questions[0].Explanation.En == "" {
		t.Errorf("first: got %+v, want graded and final, %s wrong with its answer and explanation", out, first)
	}
	out, err = w.Answer(ctx, "fo", whole(""))
	if err != nil || out.Graded || out.Correct != grade || out.Questions[0].Correct {
		t.Errorf("second: got %+v, %v; want not graded, the first grade %d standing", out, err, grade)
	}
	if rs, _ := st.Results(ctx, "fo"); len(rs) != 1 || rs[0].Score != grade {
		t.Errorf("stored: got %+v, want one result of score %d", rs, grade)
	}
	if _, evs := recorded(); evs != 2 {
		t.Errorf("timeline: got %d quiz events, want both submissions", evs)
	}
	if v, err := w.Quiz(ctx, "fo"); err != nil || !v.Final || v.Grade == nil || v.Grade.Correct != grade {
		t.Errorf("after: got %+v, %v; want the final grade %d", v, err, grade)
	}
	if _, err := w.Quiz(ctx, "nope"); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("an unknown session: got %v, want ErrNotFound", err)
	}
}
