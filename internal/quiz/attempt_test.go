package quiz

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/yamldoc"
)

// TestCheckSubmission: a submission answers every question; an empty or
// partial one is refused naming what is left out, and answers that are
// not answers are refused as before.
func TestCheckSubmission(t *testing.T) {
	t.Parallel()
	q := loadSample(t)
	all := Answers{"pick-one": {"b"}, "pick-many": {"a"}, "who-is-primary": {"prod-db-0"}, "how-many": {"3"}}
	tests := []struct {
		name    string
		answers Answers
		want    string // "" for no error
	}{
		{"every question", all, ""},
		{"nothing", Answers{}, "answer every question (4 of 4 not answered: pick-one, pick-many, who-is-primary, how-many)"},
		{"nil", nil, "answer every question (4 of 4 not answered"},
		{"one left out", Answers{"pick-one": {"a"}, "pick-many": {"a"}, "how-many": {"2"}}, "(1 of 4 not answered: who-is-primary)"},
		{"an empty list is no answer", Answers{"pick-one": {"a"}, "pick-many": {}, "who-is-primary": {"x"}, "how-many": {"2"}}, "question pick-many: no answer given"},
		{"unknown question", Answers{"pick-one": {"a"}, "nope": {"a"}}, `no question "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := q.CheckSubmission(tt.answers)
			if tt.want == "" {
				if err != nil {
					t.Errorf("got %v, want no error", err)
				}
				return
			}
			if !errors.Is(err, ErrBadAnswer) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an ErrBadAnswer containing %q", err, tt.want)
			}
		})
	}
}

// TestStanding: submissions are graded until the attempts are used or the
// grade is perfect; after that a submission is not graded and the
// standing does not move.
func TestStanding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		before     Standing
		perfect    bool
		wantGraded bool
		wantAfter  Standing
		wantFinal  bool
	}{
		{"first of one", Standing{Allowed: 1}, false, true, Standing{Used: 1, Allowed: 1}, true},
		{"second of one", Standing{Used: 1, Allowed: 1}, true, false, Standing{Used: 1, Allowed: 1}, true},
		{"first of three", Standing{Allowed: 3}, false, true, Standing{Used: 1, Allowed: 3}, false},
		{"first of three, perfect", Standing{Allowed: 3}, true, true, Standing{Used: 1, Allowed: 3, Perfect: true}, true},
		{"after a perfect one", Standing{Used: 1, Allowed: 3, Perfect: true}, false, false, Standing{Used: 1, Allowed: 3, Perfect: true}, true},
		{"last of three", Standing{Used: 2, Allowed: 3}, false, true, Standing{Used: 3, Allowed: 3}, true},
		{"past the last", Standing{Used: 3, Allowed: 3}, true, false, Standing{Used: 3, Allowed: 3}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			after, graded := tt.before.Submit(tt.perfect)
			if graded != tt.wantGraded || after != tt.wantAfter || after.Final() != tt.wantFinal {
				t.Errorf("got %+v graded=%v final=%v, want %+v graded=%v final=%v", after, graded, after.Final(), tt.wantAfter, tt.wantGraded, tt.wantFinal)
			}
		})
	}
	if (Standing{Allowed: 1, Perfect: true}).Final() {
		t.Error("no attempt used: got final, want not final")
	}
}

// TestDisclose: before the grade is final nothing of the answers is
// shown; once final, the expected answer and explanation of each
// answered question and of no other.
func TestDisclose(t *testing.T) {
	t.Parallel()
	q := loadSample(t)
	// Grade is lenient (a question left out is not correct), which lets
	// this test hold a result with an unanswered question.
	res, err := Grade(context.Background(), q, Answers{"pick-one": {"b"}, "who-is-primary": {"prod-db-0"}}, fakeCluster{"currentPrimary": "prod-db-1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		final bool
		shown map[string]bool // question id -> expected and explanation shown
	}{
		{false, map[string]bool{}},
		{true, map[string]bool{"pick-one": true, "who-is-primary": true}},
	}
	for _, tt := range tests {
		got := res.Disclose(tt.final)
		for i, qr := range got.Questions {
			shown := len(qr.Expected) > 0 || qr.Explanation.En != "" || qr.Explanation.Ko != ""
			if shown != tt.shown[qr.ID] {
				t.Errorf("final=%v, %s: got expected %v, explanation %q; want shown=%v", tt.final, qr.ID, qr.Expected, qr.Explanation.En, tt.shown[qr.ID])
			}
			if qr.Correct != res.Questions[i].Correct || qr.Answered != res.Questions[i].Answered {
				t.Errorf("final=%v, %s: got correct=%v answered=%v, want them kept", tt.final, qr.ID, qr.Correct, qr.Answered)
			}
		}
		b, _ := json.Marshal(got)
		for _, secret := range []string{"SECRET-EXPLANATION-2", "SECRET-EXPLANATION-4", `"expected":["a","c"]`} {
			if strings.Contains(string(b), secret) {
				t.Errorf("final=%v: disclosed result carries %q of an unanswered question: %s", tt.final, secret, b)
			}
		}
		if !tt.final && (strings.Contains(string(b), "SECRET") || strings.Contains(string(b), "expected")) {
			t.Errorf("not final: disclosed result carries answers: %s", b)
		}
	}
	if res.Questions[0].Explanation.En == "" {
		t.Error("Disclose changed the result it was given")
	}
}

// TestViewAndOutcome: what a learner sees before any attempt, after a
// graded one that is not final, and after the final one.
func TestViewAndOutcome(t *testing.T) {
	t.Parallel()
	q := loadSample(t)
	q.Attempts = new(int)
	*q.Attempts = 2
	answers := Answers{"pick-one": {"a"}, "pick-many": {"a"}, "who-is-primary": {"prod-db-1"}, "how-many": {"2"}}
	res, err := Grade(context.Background(), q, answers, fakeCluster{"currentPrimary": "prod-db-1", "readyReplicas": "2"})
	if err != nil {
		t.Fatal(err)
	}
	st := Standing{Allowed: q.AttemptsAllowed()}
	v := NewView(q, st, nil)
	if v.Grade != nil || v.Attempt != 0 || v.Attempts != 2 || v.Final || len(v.Questions) != 4 {
		t.Errorf("before: got %+v, want no grade, attempt 0 of 2", v)
	}
	st, graded := st.Submit(false)
	o := NewOutcome(res, st, graded)
	b, _ := json.Marshal(o)
	if !o.Graded || o.Final || o.Attempt != 1 || strings.Contains(string(b), "SECRET") || strings.Contains(string(b), "expected") {
		t.Errorf("first of two: got %s, want graded, not final, no answers", b)
	}
	if o.Correct != res.Correct || o.Total != 4 {
		t.Errorf("first of two: got %d/%d, want %d/4", o.Correct, o.Total, res.Correct)
	}
	st, graded = st.Submit(false)
	o = NewOutcome(res, st, graded)
	b, _ = json.Marshal(o)
	if !o.Graded || !o.Final || o.Attempt != 2 || !strings.Contains(string(b), "SECRET-EXPLANATION-4") || !strings.Contains(string(b), `"expected":["a","c"]`) {
		t.Errorf("second of two: got %s, want graded, final, with every answered question's answer", b)
	}
	v = NewView(q, st, &res)
	if !v.Final || v.Grade == nil || v.Grade.Questions[1].Explanation.En != "SECRET-EXPLANATION-2" {
		t.Errorf("view after the final attempt: got %+v, want the grade with its explanations", v)
	}
}

func TestAttemptsField(t *testing.T) {
	t.Parallel()
	head := "apiVersion: oplab.dev/v1alpha1\nkind: Quiz\nid: q\ntitle: {en: T, ko: T}\n"
	body := "questions:\n- id: a\n  type: single\n  prompt: {en: x, ko: y}\n  choices:\n  - {id: a, text: {en: a, ko: a}, correct: true}\n  - {id: b, text: {en: b, ko: b}}\n  explanation: {en: e, ko: e}\n"
	tests := []struct {
		attempts string
		want     int    // attempts allowed when valid
		err      string // the error at path attempts
	}{
		{"", 1, ""},
		{"attempts: 1\n", 1, ""},
		{"attempts: 3\n", 3, ""},
		{"attempts: 10\n", 10, ""},
		{"attempts: 0\n", 0, "must be from 1 to 10, got 0"},
		{"attempts: -2\n", 0, "must be from 1 to 10, got -2"},
		{"attempts: 11\n", 0, "must be from 1 to 10, got 11"},
		{"attempts: many\n", 0, "cannot unmarshal"},
	}
	for _, tt := range tests {
		q, errs := Parse("x.yaml", []byte(head+tt.attempts+body))
		if tt.err == "" {
			if len(errs) > 0 || q.AttemptsAllowed() != tt.want {
				t.Errorf("%q: got %v allowed, errors %v; want %d", tt.attempts, q, errs, tt.want)
			}
			continue
		}
		found := false
		for _, e := range yamldoc.AsErrors(errs) {
			found = found || e.Path == "attempts" && e.Line == 5 && strings.Contains(e.Msg, tt.err)
		}
		if !found {
			t.Errorf("%q: got %v, want an error at x.yaml:5 attempts containing %q", tt.attempts, errs, tt.err)
		}
	}
}
