package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"oplab.dev/oplab/internal/board"
)

// Classroom is what the instructor's pages need of the application layer.
// Every method acts as an instructor, who sees and acts on the classes
// they run (an admin: every class); another's class is ErrForbidden, a
// session outside the class ErrNotFound.
//
// A class and its board are package board's views, which the application
// layer fills and the server renders as they are: the server may not
// import the application layer (imports_test.go), and a copy of the
// board's row here, mapped field by field, drifted from the one the
// application decides (it lost `active`, and the board its buttons).
type Classroom interface {
	// Classes lists the classes the instructor runs, newest first.
	Classes(ctx context.Context, in Instructor) ([]board.Class, error)
	// CreateClass makes a class from its form; EditClass changes class
	// to its form's fields. Input that breaks a rule is ErrInvalid; an
	// edit made from a version the class has moved past is ErrChanged.
	CreateClass(ctx context.Context, in Instructor, f ClassForm) (*board.Class, error)
	EditClass(ctx context.Context, in Instructor, class string, f ClassForm) (*board.Class, error)
	// Board is a class as its instructor watches it, texts in lang.
	Board(ctx context.Context, in Instructor, class, lang string) (*board.View, error)
	// ClassEvents sends the events of the class's sessions from now on,
	// until ctx ends.
	ClassEvents(ctx context.Context, in Instructor, class string) (<-chan Update, error)
	// ClassSession returns a session of the class.
	ClassSession(ctx context.Context, in Instructor, class, session string) (*SessionRef, error)
	// ResetLearner resets the current exercise of a session of the
	// class; EndLearner stops it, saying the instructor ended it.
	ResetLearner(ctx context.Context, in Instructor, class, session string, progress func(Update)) (any, error)
	EndLearner(ctx context.Context, in Instructor, class, session string, progress func(Update)) (any, error)
	// ExtendLearner adds time to the limit of a session of the class.
	ExtendLearner(ctx context.Context, in Instructor, class, session string, by time.Duration) (any, error)
	// CloseClass closes a class to every learner.
	CloseClass(ctx context.Context, in Instructor, class string) error
	// Export writes the class's results as CSV.
	Export(ctx context.Context, in Instructor, class string, w io.Writer) error
}

// Instructor is a signed-in instructor.
type Instructor struct {
	Name  string `json:"name"`
	Admin bool   `json:"admin"`
}

var (
	// ErrForbidden: the instructor may not see or act on that (403).
	ErrForbidden = errors.New("not allowed")
	// ErrBadCredentials: a wrong instructor name or password (401).
	ErrBadCredentials = errors.New("wrong name or password")
	// ErrChanged: the class changed since the form was shown (409).
	ErrChanged = fmt.Errorf("changed meanwhile: %w", ErrConflict)
)

// ClassForm is a class's create or edit form as the instructor filled it
// in. Its fields are text: the application layer reads them, as it reads
// the command line's flags.
type ClassForm struct {
	Name string `json:"name"`
	// Labs are lab ids in the order the class runs them.
	Labs      []string `json:"labs"`
	Capacity  string   `json:"capacity"`
	Opens     string   `json:"opens"`
	Closes    string   `json:"closes"`
	TimeLimit string   `json:"timeLimit"`
	// Warm is the warm sessions per lab as typed (lab id → number).
	Warm map[string]string `json:"warm,omitempty"`
	// Zone is the browser's time zone (IANA name), in which Opens and
	// Closes are read; the server's own when empty.
	Zone string `json:"zone"`
	// Version is the class's version the edit form showed.
	Version int64 `json:"version"`
	NewCode bool  `json:"newCode"`
	Reopen  bool  `json:"reopen"`
}
