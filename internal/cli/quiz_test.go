package cli

import (
	"bufio"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/quiz"
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
