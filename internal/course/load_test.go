package course

import (
	"errors"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	c, err := Load(shipped())
	if err != nil {
		t.Fatal(err)
	}
	labs := c.Labs()
	if len(labs) == 0 {
		t.Fatal("got no labs")
	}
	for i := 1; i < len(labs); i++ {
		if labs[i-1].ID >= labs[i].ID {
			t.Errorf("labs not sorted: %s before %s", labs[i-1].ID, labs[i].ID)
		}
	}
	tests := []struct {
		id      string
		wantErr error
	}{
		{"failover", nil},
		{"rbac", nil},
		{"no-such-lab", ErrUnknownLab},
	}
	for _, tt := range tests {
		l, err := c.Lab(tt.id)
		switch {
		case !errors.Is(err, tt.wantErr):
			t.Errorf("lab %s: got error %v, want %v", tt.id, err, tt.wantErr)
		case err == nil && l.ID != tt.id:
			t.Errorf("lab %s: got lab %s", tt.id, l.ID)
		case err != nil && !strings.Contains(err.Error(), "failover"):
			t.Errorf("lab %s: got %v, want the known labs listed", tt.id, err)
		}
	}
	for _, l := range labs {
		if q, err := c.Quiz(l.Quiz); err != nil || q.ID != l.Quiz {
			t.Errorf("quiz %s of lab %s: got %v", l.Quiz, l.ID, err)
		}
	}
	if _, err := c.Quiz("nope"); !errors.Is(err, ErrUnknownQuiz) || !strings.Contains(err.Error(), "failover") {
		t.Errorf("unknown quiz: got %v, want ErrUnknownQuiz listing the quizzes", err)
	}
}

// TestLoadRefusesBrokenCourse: a course with one problem does not load,
// and the error names the problem.
func TestLoadRefusesBrokenCourse(t *testing.T) {
	t.Parallel()
	src := shipped()
	l := copyFS(t, src.Labs)
	replace(t, l, "failover/lab.yaml", "quiz: failover", "quiz: nope")
	src.Labs = l
	c, err := Load(src)
	if c != nil || err == nil || !strings.Contains(err.Error(), `quiz "nope"`) {
		t.Errorf("got %v, %v; want no course and an error naming quiz \"nope\"", c, err)
	}
}
