package quiz

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"oplab.dev/oplab/internal/yamldoc"
)

func loadSample(t *testing.T) *Quiz {
	t.Helper()
	data, err := os.ReadFile("testdata/sample.yaml")
	if err != nil {
		t.Fatal(err)
	}
	q, errs := Parse("sample.yaml", data)
	if len(errs) > 0 {
		t.Fatalf("parse sample: %v", errs)
	}
	return q
}

// fakeCluster answers queries from a map keyed by query name.
type fakeCluster map[string]string

func (f fakeCluster) Answer(_ context.Context, q Query) (string, error) {
	v, ok := f[q.Query]
	if !ok {
		return "", errors.New("no such object")
	}
	return v, nil
}

func TestGrade(t *testing.T) {
	t.Parallel()
	q := loadSample(t)
	cluster := fakeCluster{"currentPrimary": "prod-db-1", "readyReplicas": "2"}
	tests := []struct {
		name    string
		answers Answers
		ca      ClusterAnswers
		want    map[string]bool
	}{
		{"all right", Answers{"pick-one": {"a"}, "pick-many": {"c", "a"}, "who-is-primary": {"pod/prod-db-1"}, "how-many": {" 2 "}}, cluster,
			map[string]bool{"pick-one": true, "pick-many": true, "who-is-primary": true, "how-many": true}},
		{"wrong single", Answers{"pick-one": {"b"}}, cluster, map[string]bool{"pick-one": false}},
		{"multiple partly", Answers{"pick-many": {"a"}}, cluster, map[string]bool{"pick-many": false}},
		{"multiple extra", Answers{"pick-many": {"a", "b", "c"}}, cluster, map[string]bool{"pick-many": false}},
		{"wrong primary", Answers{"who-is-primary": {"prod-db-0"}}, cluster, map[string]bool{"who-is-primary": false}},
		{"number not a number", Answers{"how-many": {"two"}}, cluster, map[string]bool{"how-many": false}},
		{"no cluster", Answers{"who-is-primary": {"prod-db-1"}}, nil, map[string]bool{"who-is-primary": false}},
		{"cluster error", Answers{"who-is-primary": {"prod-db-1"}}, fakeCluster{}, map[string]bool{"who-is-primary": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := Grade(context.Background(), q, tt.answers, tt.ca)
			if err != nil {
				t.Fatal(err)
			}
			if r.Total != 4 {
				t.Errorf("total: got %d, want 4", r.Total)
			}
			for _, qr := range r.Questions {
				want, ok := tt.want[qr.ID]
				if !ok {
					continue
				}
				if qr.Correct != want {
					t.Errorf("%s: got correct=%v, want %v (expected %v, error %q)", qr.ID, qr.Correct, want, qr.Expected, qr.Error)
				}
				if qr.Explanation.En == "" {
					t.Errorf("%s: result carries no explanation", qr.ID)
				}
			}
		})
	}
}

func TestGradeErrorsExplained(t *testing.T) {
	t.Parallel()
	q := loadSample(t)
	r, err := Grade(context.Background(), q, Answers{"who-is-primary": {"x"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	qr := r.Questions[2]
	if qr.Error != ErrNoCluster.Error() {
		t.Errorf("got error %q, want %q", qr.Error, ErrNoCluster)
	}
	r, err = Grade(context.Background(), q, Answers{"pick-one": {"a"}}, fakeCluster{"currentPrimary": "prod-db-1", "readyReplicas": "3"})
	if err != nil || r.Correct != 1 {
		t.Errorf("correct: got %d, %v; want 1", r.Correct, err)
	}
}

func TestPublicHidesAnswers(t *testing.T) {
	t.Parallel()
	q := loadSample(t)
	b, err := json.Marshal(q.Public())
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, secret := range []string{"SECRET-EXPLANATION", "correct", "currentPrimary", "readyReplicas", "answer", "explanation"} {
		if strings.Contains(s, secret) {
			t.Errorf("public view contains %q: %s", secret, s)
		}
	}
	if !strings.Contains(s, "Pick one") || !strings.Contains(s, `"id":"b"`) {
		t.Errorf("public view lacks the prompt or choices: %s", s)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	head := "apiVersion: oplab.dev/v1alpha1\nkind: Quiz\nid: q\ntitle: {en: T, ko: T}\n"
	tests := []struct {
		name string
		src  string
		line int
		path string
		msg  string
	}{
		{"unknown top field", head + "questionz: []\n", 5, "questionz", "unknown field"},
		{"unknown nested field", head + "questions:\n- id: a\n  type: single\n  promtp: {en: x, ko: y}\n", 8, "questions[0].promtp", "unknown field"},
		{"missing korean", head + "questions:\n- id: a\n  type: single\n  prompt: {en: x}\n  choices:\n  - {id: a, text: {en: a, ko: a}, correct: true}\n  - {id: b, text: {en: b, ko: b}}\n  explanation: {en: e, ko: e}\n", 8, "questions[0].prompt.ko", "missing ko"},
		{"two correct in single", head + "questions:\n- id: a\n  type: single\n  prompt: {en: x, ko: y}\n  choices:\n  - {id: a, text: {en: a, ko: a}, correct: true}\n  - {id: b, text: {en: b, ko: b}, correct: true}\n  explanation: {en: e, ko: e}\n", 9, "questions[0].choices", "exactly one correct"},
		{"unknown query", head + "questions:\n- id: a\n  type: cluster\n  prompt: {en: x, ko: y}\n  answer: {query: favouriteColour, cluster: c}\n  explanation: {en: e, ko: e}\n", 9, "questions[0].answer.query", "unknown query"},
		{"wrong type", head + "questions:\n- id: a\n  type: single\n  choices: nope\n", 8, "questions[0].choices", "cannot unmarshal"},
		{"bad kind", "apiVersion: oplab.dev/v1alpha1\nkind: Lab\nid: q\ntitle: {en: T, ko: T}\nquestions: []\n", 2, "kind", "must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, errs := Parse("x.yaml", []byte(tt.src))
			for _, e := range yamldoc.AsErrors(errs) {
				if e.File == "x.yaml" && e.Line == tt.line && e.Path == tt.path && strings.Contains(e.Msg, tt.msg) {
					return
				}
			}
			t.Errorf("got %v, want an error at x.yaml:%d %s containing %q", errs, tt.line, tt.path, tt.msg)
		})
	}
}

func TestLoadChecksFileName(t *testing.T) {
	t.Parallel()
	data, _ := os.ReadFile("testdata/sample.yaml")
	fsys := fstest.MapFS{"other.yaml": {Data: data}, "sample.yaml": {Data: data}}
	all, errs := LoadAll(fsys)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "does not match file name") {
		t.Errorf("got %v, want one file-name mismatch", errs)
	}
	if _, ok := all["sample"]; !ok || len(all) != 1 {
		t.Errorf("got %d quizzes, want only sample", len(all))
	}
}
