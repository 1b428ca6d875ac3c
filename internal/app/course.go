package app

import (
	"errors"

	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/lesson"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/yamldoc"
)

// CourseSource is where a course's labs, lesson pages and quizzes are.
type CourseSource = course.Sources

// Views of a lab's self-test, as it runs.
type (
	SelfTestReport   = engine.SelfTestReport
	SelfTestStep     = engine.Step
	SelfTestProgress = engine.Progress
)

// BuiltinCourse is the course built into oplab.
func BuiltinCourse() CourseSource { return course.Embedded() }

// FindCourse returns the course at path: a course folder (holding labs/,
// content/ and quizzes/), its labs/ folder or one lab's folder.
func FindCourse(path string) (CourseSource, error) { return course.Find(path) }

// Problem is one thing wrong with a course, where it is known.
type Problem struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// ValidateCourse checks every lab file, lesson page and quiz of src, and
// every reference between them.
func ValidateCourse(src CourseSource) []Problem {
	errs := course.Validate(src)
	out := make([]Problem, 0, len(errs))
	for _, err := range errs {
		var e *yamldoc.Error
		if errors.As(err, &e) {
			out = append(out, Problem{File: e.File, Line: e.Line, Path: e.Path, Message: e.Msg})
			continue
		}
		out = append(out, Problem{Message: err.Error()})
	}
	return out
}

// String is the problem as one line, with its place.
func (p Problem) String() string {
	if p.File == "" {
		return p.Message
	}
	return (&yamldoc.Error{File: p.File, Line: p.Line, Path: p.Path, Msg: p.Message}).Error()
}

// CourseSize counts what a course holds.
type CourseSize struct {
	Labs, Pages, Languages, Quizzes int
}

// SizeOf counts src's labs, lesson pages (in English), languages and
// quizzes.
func SizeOf(src CourseSource) CourseSize {
	labs, _ := lab.IDs(src.Labs)
	quizzes, _ := quiz.IDs(src.Quizzes)
	pages, _ := lesson.PageIDs(src.Content, locale.En)
	return CourseSize{Labs: len(labs), Pages: len(pages), Languages: len(locale.All()), Quizzes: len(quizzes)}
}
