package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestQuizOverHTTP: what the page gets of the quiz, through the quiz
// package's rules (the fake keeps its grades in memory; the application's
// own test in internal/app/webapp runs them on the store). An empty
// submission is refused and shows nothing; the first whole submission is
// the grade and shows its answer; a second one does not change it.
func TestQuizOverHTTP(t *testing.T) {
	ts := newTestServer(t)
	hdr := map[string]string{csrfHeader: ts.csrf}
	url := ts.URL + "/api/sessions/alice-1/quiz"
	explanation := fakeQuiz.Questions[0].Explanation.En

	steps := []struct {
		name, body string
		code       int
		want       []string // in the body
		hidden     bool     // no expected answer, no explanation
	}{
		{"before any submission", "", http.StatusOK, []string{`"attempt":0`, `"attempts":1`, `"final":false`}, true},
		{"empty", `{"answers":{}}`, http.StatusBadRequest, []string{"answer every question (1 of 1 not answered: q1)"}, true},
		{"no answers at all", `{}`, http.StatusBadRequest, []string{"answer every question"}, true},
		{"an empty list", `{"answers":{"q1":[]}}`, http.StatusBadRequest, []string{"no answer given"}, true},
		{"first, wrong", `{"answers":{"q1":["b"]}}`, http.StatusOK, []string{`"correct":0`, `"graded":true`, `"final":true`, `"expected":["a"]`, explanation}, false},
		{"second, right", `{"answers":{"q1":["a"]}}`, http.StatusOK, []string{`"correct":0`, `"graded":false`, `"final":true`}, false},
		{"after", "", http.StatusOK, []string{`"final":true`, `"grade":{"quizId":"failover","correct":0`}, false},
	}
	for _, st := range steps {
		method := "POST"
		if st.body == "" {
			method = "GET"
		}
		code, body, _ := do(t, ts.client, method, url, st.body, hdr)
		if code != st.code {
			t.Errorf("%s: got %d %s, want %d", st.name, code, body, st.code)
		}
		for _, w := range st.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: body lacks %q: %s", st.name, w, body)
			}
		}
		if hidden := !strings.Contains(body, "expected") && !strings.Contains(body, explanation); hidden != st.hidden {
			t.Errorf("%s: got answers hidden=%v, want %v: %s", st.name, hidden, st.hidden, body)
		}
		if code == http.StatusOK && !json.Valid([]byte(body)) {
			t.Errorf("%s: not JSON: %s", st.name, body)
		}
	}
}
