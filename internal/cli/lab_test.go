package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/app"
)

// runLab executes the oplab command line without a cluster.
func runLab(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return out.String(), err
}

func TestLabValidateEmbedded(t *testing.T) {
	t.Parallel()
	out, err := runLab(t, "lab", "validate")
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	// The summary counts what the repository holds.
	count := func(pattern string) int {
		t.Helper()
		m, err := filepath.Glob(filepath.Join("..", "..", pattern))
		if err != nil || len(m) == 0 {
			t.Fatalf("%s: %d files, %v", pattern, len(m), err)
		}
		return len(m)
	}
	want := fmt.Sprintf("ok: %d labs, %d lesson pages in 2 languages, %d quizzes", count("labs/*/lab.yaml"), count("content/en/*.md"), count("quizzes/*.yaml"))
	if !strings.HasPrefix(out, want) {
		t.Errorf("got %q, want %q", out, want)
	}
}

// TestLabValidatePath validates a copy of the repository's course folders
// with one broken lab, by path to that lab's folder.
func TestLabValidatePath(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, d := range []string{"labs", "content", "quizzes"} {
		if err := os.CopyFS(filepath.Join(root, d), os.DirFS(filepath.Join("..", "..", d))); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(root, "labs", "quota", "lab.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(data), "kind: quotaPresent", "kind: quotaPresnt", 1)
	if err := os.WriteFile(file, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}

	out, err := runLab(t, "lab", "validate", filepath.Join(root, "labs", "quota"))
	if err == nil || !strings.Contains(err.Error(), "1 problems found") {
		t.Errorf("got error %v, want 1 problem", err)
	}
	if !strings.Contains(out, `labs/quota/lab.yaml:`) || !strings.Contains(out, `unknown check kind "quotaPresnt"`) {
		t.Errorf("got %q, want the file, line and kind named", out)
	}

	out, _ = runLab(t, "lab", "validate", "-o", "json", root)
	var got struct {
		OK       bool          `json:"ok"`
		Problems []app.Problem `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if got.OK || len(got.Problems) != 1 || got.Problems[0].Line == 0 || got.Problems[0].File != "labs/quota/lab.yaml" {
		t.Errorf("got %+v, want one located problem in labs/quota/lab.yaml", got)
	}
}
