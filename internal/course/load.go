package course

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/quiz"
)

// Errors a caller can test for with errors.Is.
var (
	ErrUnknownLab  = errors.New("unknown lab")
	ErrUnknownQuiz = errors.New("unknown quiz")
)

// Course is a course loaded and validated once: its labs and quizzes
// parsed, every reference between them and the lesson pages checked. It
// is read-only after Load and safe for concurrent use.
type Course struct {
	// Sources are the folders it was loaded from; lesson pages are
	// rendered from Sources.Content.
	Sources Sources
	labs    []*lab.Lab // sorted by id
	quizzes map[string]*quiz.Quiz
}

// Load reads and validates the whole course in src (see Validate) and
// returns it, or every problem found joined in one error.
func Load(src Sources) (*Course, error) {
	labs, quizzes, errs := validate(src)
	if len(errs) > 0 {
		return nil, fmt.Errorf("load course: %d problems: %w", len(errs), errors.Join(errs...))
	}
	return &Course{Sources: src, labs: labs, quizzes: quizzes}, nil
}

// Labs returns every lab, sorted by id. The labs are shared: callers must
// not change them.
func (c *Course) Labs() []*lab.Lab { return slices.Clone(c.labs) }

// Lab returns lab id, or an error wrapping ErrUnknownLab that lists the
// labs there are.
func (c *Course) Lab(id string) (*lab.Lab, error) {
	for _, l := range c.labs {
		if l.ID == id {
			return l, nil
		}
	}
	ids := make([]string, len(c.labs))
	for i, l := range c.labs {
		ids[i] = l.ID
	}
	return nil, fmt.Errorf("%w %q (labs: %s)", ErrUnknownLab, id, strings.Join(ids, ", "))
}

// Quiz returns quiz id, or an error wrapping ErrUnknownQuiz that lists the
// quizzes there are.
func (c *Course) Quiz(id string) (*quiz.Quiz, error) {
	if q, ok := c.quizzes[id]; ok {
		return q, nil
	}
	return nil, fmt.Errorf("%w %q (quizzes: %s)", ErrUnknownQuiz, id, strings.Join(c.QuizIDs(), ", "))
}

// QuizIDs returns the ids of every quiz, sorted.
func (c *Course) QuizIDs() []string {
	ids := make([]string, 0, len(c.quizzes))
	for id := range c.quizzes {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
