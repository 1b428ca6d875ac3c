package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
)

// Classroom is what the instructor's pages need of the application layer.
// Every method acts as an instructor, who sees and acts on the classes
// they run (an admin: every class); another's class is ErrForbidden, a
// session outside the class ErrNotFound.
type Classroom interface {
	// SignInInstructor checks an instructor's name and password and
	// records their sign-in (see SignIns). A wrong name or password is
	// ErrBadCredentials; too many attempts, or too many being checked at
	// once, a *Refusal with RefusalTooMany and when to retry.
	SignInInstructor(ctx context.Context, cr Credentials) (*SignIn, error)
	// Classes lists the classes the instructor runs, newest first.
	Classes(ctx context.Context, in Instructor) ([]ClassEntry, error)
	// CreateClass makes a class from its form; EditClass changes class
	// to its form's fields. Input that breaks a rule is ErrInvalid; an
	// edit made from a version the class has moved past is ErrChanged.
	CreateClass(ctx context.Context, in Instructor, f ClassForm) (*ClassEntry, error)
	EditClass(ctx context.Context, in Instructor, class string, f ClassForm) (*ClassEntry, error)
	// Board is a class as its instructor watches it, texts in lang.
	Board(ctx context.Context, in Instructor, class, lang string) (*Board, error)
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

// ClassEntry is a class in the instructor's list.
type ClassEntry struct {
	Name     string   `json:"name"`
	Labs     []string `json:"labs"`
	JoinCode string   `json:"joinCode"`
	Members  int      `json:"members"`
	Capacity int      `json:"capacity"`
	Owner    string   `json:"owner"`
	// State is open, scheduled, ended, closed or full.
	State     string        `json:"state"`
	Opens     time.Time     `json:"opens,omitzero"`
	Closes    time.Time     `json:"closes,omitzero"`
	TimeLimit time.Duration `json:"timeLimitMs,omitempty"`
	Closed    bool          `json:"closed"`
	// Version changes with every edit (an edit form sends the one it
	// showed).
	Version int64 `json:"version"`
	// Warm is how many sessions of each lab the class keeps started ahead.
	Warm map[string]int `json:"warm,omitempty"`
}

// MarshalJSON writes e's time limit in whole milliseconds.
func (e ClassEntry) MarshalJSON() ([]byte, error) {
	type plain ClassEntry
	return json.Marshal(struct {
		plain
		TimeLimit int64 `json:"timeLimitMs,omitempty"`
	}{plain(e), jsonconv.Millis(e.TimeLimit)})
}

// Board is a class as its instructor watches it: a row per member, a
// column per exercise of the class's labs.
type Board struct {
	Class   ClassEntry    `json:"class"`
	Columns []BoardColumn `json:"columns"`
	Rows    []BoardRow    `json:"rows"`
	At      time.Time     `json:"at"`
	// Capacity is the machine's room for clusters; nil when unknown.
	Capacity *Capacity `json:"capacity,omitempty"`
}

// Capacity is what the learners waiting for a cluster see, and why: the
// queue and its estimate, the clusters live and starting (of MaxClusters,
// when capped), what one costs (measured on Measured live clusters;
// assumed when 0) and the machine's free memory and idle cores.
type Capacity struct {
	Queue         int           `json:"queue"`
	Estimate      time.Duration `json:"estimateMs"`
	Reason        string        `json:"reason,omitempty"`
	Live          int           `json:"live"`
	Starting      int           `json:"starting"`
	MaxClusters   int           `json:"maxClusters,omitempty"`
	ClusterMemory uint64        `json:"clusterMemoryBytes"`
	ClusterCPU    float64       `json:"clusterCpuCores"`
	Measured      int           `json:"measuredClusters"`
	MemAvailable  uint64        `json:"memAvailableBytes"`
	IdleCores     float64       `json:"idleCores"`
	Cores         int           `json:"cores"`
}

// MarshalJSON writes c's estimate in whole milliseconds.
func (c Capacity) MarshalJSON() ([]byte, error) {
	type plain Capacity
	return json.Marshal(struct {
		plain
		Estimate int64 `json:"estimateMs"`
	}{plain(c), jsonconv.Millis(c.Estimate)})
}

// BoardColumn is one exercise of one of the class's labs.
type BoardColumn struct {
	Lab       string        `json:"lab"`
	Exercise  string        `json:"exercise"`
	Title     string        `json:"title"`
	TimeLimit time.Duration `json:"timeLimitMs,omitempty"`
}

// MarshalJSON writes c's time limit in whole milliseconds.
func (c BoardColumn) MarshalJSON() ([]byte, error) {
	type plain BoardColumn
	return json.Marshal(struct {
		plain
		TimeLimit int64 `json:"timeLimitMs,omitempty"`
	}{plain(c), jsonconv.Millis(c.TimeLimit)})
}

// BoardRow is one member: their latest session and their outcomes.
type BoardRow struct {
	Learner  string `json:"learner"`
	Name     string `json:"name"`
	Session  string `json:"session,omitempty"`
	Lab      string `json:"lab,omitempty"`
	State    string `json:"state,omitempty"`
	Exercise string `json:"exercise,omitempty"`
	// FaultSince is when the current exercise's fault took effect, while
	// it is not recovered: its T0, "t0" as everywhere else.
	FaultSince   time.Time   `json:"t0,omitzero"`
	Cells        []BoardCell `json:"cells"`
	Passed       int         `json:"passed"`
	Hints        int         `json:"hints"`
	QuizScore    int         `json:"quizScore"`
	QuizTotal    int         `json:"quizTotal"`
	LastActivity time.Time   `json:"lastActivity,omitzero"`
	// Stuck is "fault" (the fault outlived the exercise's time limit),
	// "idle" (no activity for ten minutes) or "".
	Stuck string `json:"stuck,omitempty"`
}

// BoardCell is a member's outcome on one exercise.
type BoardCell struct {
	Score    int           `json:"score"`
	Total    int           `json:"total"`
	Passed   bool          `json:"passed"`
	Recovery time.Duration `json:"recoveryMs,omitempty"`
	Hints    int           `json:"hints"`
	Current  bool          `json:"current,omitempty"`
}

// MarshalJSON writes c's time to recovery in whole milliseconds.
func (c BoardCell) MarshalJSON() ([]byte, error) {
	type plain BoardCell
	return json.Marshal(struct {
		plain
		Recovery int64 `json:"recoveryMs,omitempty"`
	}{plain(c), jsonconv.Millis(c.Recovery)})
}
