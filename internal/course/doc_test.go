package course

import (
	"os"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/quiz"
)

// TestFormatDocListsEveryKind keeps docs/lab-format.md in step with the
// registries.
func TestFormatDocListsEveryKind(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/lab-format.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, k := range append(lab.ActionKinds(), lab.CheckKinds()...) {
		if !strings.Contains(doc, "| `"+k.Name+"` |") {
			t.Errorf("docs/lab-format.md has no table row for kind %s", k.Name)
		}
	}
	for _, q := range quiz.QueryKinds() {
		if !strings.Contains(doc, "`"+q.Name+"`") {
			t.Errorf("docs/lab-format.md does not mention query %s", q.Name)
		}
	}
}
