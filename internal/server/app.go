package server

import (
	"context"
	"errors"
	"html/template"
	"io"
	"time"

	"oplab.dev/oplab/internal/frame"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/quiz"
)

// The server declares what it needs of oplab's application layer by who
// calls it: a learner's pages (Learning), an instructor's (Classroom), the
// sign-in forms and every signed-in request (SignIns), the web console
// (Console), the live panels (Streams) and the operator's probes
// (Operations). It holds no policy of its own: every method is one call
// into the layer the CLI uses too.

// Labs is the course as a learner browses it.
type Labs interface {
	// Catalogue lists the labs with the learner's state in each.
	Catalogue(ctx context.Context, learner, lang string) ([]LabEntry, error)
	// Lab returns a lab as its page shows it: lesson and instructions
	// rendered to HTML in lang. ErrNotFound for an unknown lab.
	Lab(ctx context.Context, id, lang string) (*LabView, error)
}

// SessionViews read a learner's sessions.
type SessionViews interface {
	// LabSession returns the session a lab's page shows: the learner's
	// live session of the lab, else their newest, which may have ended;
	// ErrNotFound when they have none.
	LabSession(ctx context.Context, learner, lab string) (*SessionRef, error)
	// Session returns a session's owner and place, ErrNotFound when none.
	Session(ctx context.Context, id string) (*SessionRef, error)
	// Status is the session's view, sent to the browser as JSON.
	Status(ctx context.Context, id string) (any, error)
	// Wake is the session's view once it is awake: a session nobody
	// looked at for a while sleeps, and its learner's page wakes it,
	// telling progress the step.
	Wake(ctx context.Context, id string, progress func(Update)) (any, error)
	// Timeline returns a page of the session's events after seq, oldest
	// first: at most limit (the application's own page when 0, and never
	// more than it), and whether more follow.
	Timeline(ctx context.Context, id string, after int64, limit int) ([]Update, bool, error)
	// Debrief returns the session's record on one time axis: events and
	// the operator's log.
	Debrief(ctx context.Context, id string) (*Debrief, error)
	// Summary is the session's end: scores, times to recovery, hints, quiz.
	Summary(ctx context.Context, id, lang string) (*SummaryView, error)
}

// Exercises are a session's actions. Their results are sent to the browser
// as JSON unchanged; progress, when not nil, hears each step.
type Exercises interface {
	Start(ctx context.Context, learner, lab, lang string, progress func(Update)) (any, error)
	Chaos(ctx context.Context, id, exercise string, progress func(Update)) (any, error)
	Check(ctx context.Context, id string, progress func(Update)) (any, error)
	Hint(ctx context.Context, id string) (any, error)
	Reset(ctx context.Context, id string, progress func(Update)) (any, error)
	Stop(ctx context.Context, id string, progress func(Update)) (any, error)
}

// Quizzes are a session's quiz. Quiz returns it as its learner may see it:
// no answers, and the grade so far. Answer grades a submission, which must
// answer every question (ErrInvalid); the application decides which
// submissions are graded and what of the answers is shown.
type Quizzes interface {
	Quiz(ctx context.Context, id string) (*quiz.View, error)
	Answer(ctx context.Context, id string, answers quiz.Answers) (*quiz.Outcome, error)
}

// Joining lets a learner into a class.
type Joining interface {
	// Join puts a learner in the class whose join code is code, under a
	// display name; client is the caller's address (wrong codes are
	// limited per client). The Member carries the personal rejoin code,
	// shown once. A refusal is a *Refusal.
	Join(ctx context.Context, client, code, name string) (*Member, error)
	// Rejoin lets a member back in with their personal rejoin code.
	Rejoin(ctx context.Context, client, code string) (*Member, error)
}

// Learning is every call a learner's pages and API make.
type Learning interface {
	Labs
	SessionViews
	Exercises
	Quizzes
	Joining
}

// Operations answer the operator's probes.
type Operations interface {
	// Ready is nil when the server can serve: its store and cluster
	// provider are reachable (/readyz). /healthz only says the process
	// answers.
	Ready(ctx context.Context) error
}

// Member is a learner of a class, who signs in as Learner.
type Member struct {
	Learner string
	Name    string
	Class   string
	// RejoinCode is set by Join only: it cannot be shown again.
	RejoinCode string
}

// Reasons of a Refusal: the page says each in the learner's language
// (the catalogue's "refusal.<reason>").
const (
	RefusalBadCode    = "bad-code"     // no class or member has the code
	RefusalTooMany    = "too-many"     // too many wrong codes from the client
	RefusalBadName    = "bad-name"     // the display name breaks a rule
	RefusalNameTaken  = "name-taken"   // another member of the class has it
	RefusalFull       = "full"         // the class is at capacity
	RefusalClosed     = "closed"       // closed by its instructor
	RefusalNotOpen    = "not-open"     // before its opening time
	RefusalEnded      = "ended"        // past its closing time
	RefusalNotInClass = "not-in-class" // the lab is not one of the class's
)

// Refusal is the application layer's no to a learner (a join, a start),
// with the reason named so the page can say it in the learner's language
// and answer with the right status.
type Refusal struct {
	Reason string
	// Retry is how long to wait before trying again (RefusalTooMany).
	Retry time.Duration
	Err   error
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// Console runs a learner's kubectl command line against the session's own
// cluster, writing its output to out as it comes; stdin is the editor's
// YAML for `-f -`. A refused line is an error whose message says why.
type Console interface {
	Run(ctx context.Context, session, line, stdin string, out io.Writer) error
	Complete(ctx context.Context, session, line string) (Completion, error)
	// Apply applies the YAML editor's manifest to the session's cluster,
	// as a server-side dry run only when dryRun. A manifest the cluster
	// refuses is a result, not an error.
	Apply(ctx context.Context, session, yaml string, dryRun bool) (ApplyResult, error)
}

// ApplyResult is what the YAML editor shows after a dry run or an apply.
type ApplyResult struct {
	OK     bool   `json:"ok"`
	Output string `json:"output"`
	Error  string `json:"error,omitempty"`
	// Line is the editor's line a failure is about, 1-based; 0 when
	// unknown.
	Line int `json:"line,omitempty"`
}

// Completion is the words that may replace the end of a console line from
// byte offset From.
type Completion struct {
	From       int      `json:"from"`
	Candidates []string `json:"candidates"`
}

// Streams opens a session's live streams ("log": the operator's log,
// "cluster": the cluster view) from a client's resume point: a hello
// frame first, then data and gap frames (package frame, the one type of
// them), each written to the client as its MarshalJSON makes it. The
// channel closes when ctx ends or the stream ends.
type Streams interface {
	Subscribe(ctx context.Context, session, stream string, from Resume) (<-chan frame.Frame, error)
}

// Resume is where a client that comes back picks its stream up: the epoch
// and number of the last frame it saw, which mean something only to the
// server that sent them, and the last cursor it saw, which any server
// reading the same source understands.
type Resume struct {
	Epoch  string
	After  uint64
	Cursor string
}

// maxCursor bounds a client's cursor (a log line's time is 30 bytes).
const maxCursor = 64

// Update is a progress step or a timeline event, as the browser gets it.
// Time is when it happened: "at", as in the event Data holds.
type Update struct {
	Seq      int64     `json:"seq"`
	Session  string    `json:"session,omitempty"`
	Kind     string    `json:"kind"`
	Exercise string    `json:"exercise,omitempty"`
	Message  string    `json:"message"`
	Time     time.Time `json:"at"`
	Data     any       `json:"data,omitempty"`
}

// Errors the application layer wraps its own in, so the server can answer
// with the right status without knowing the layer's errors.
var (
	// ErrNotFound: no such lab or session (404).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the step does not fit the session's state: out of
	// order, ended, not ready, another session active (409).
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the learner's input is wrong (400).
	ErrInvalid = errors.New("invalid input")
)

// LabEntry is a lab in the catalogue (/api/labs).
type LabEntry struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Summary string `json:"summary"`
	// Duration is the lab's time limit: its exercises' added up.
	Duration jsonconv.Duration `json:"timeLimitMs"`
	Requires []string          `json:"requires"`
	// Missing are the capabilities of Requires this server's provider
	// lacks: the lab cannot start here, and the catalogue says so.
	Missing []string `json:"missing,omitempty"`
	// State is the learner's: "", "provisioning", "ready", "in-exercise",
	// "completed", "failed" or "expired"; Session is that session's id.
	State string `json:"state,omitempty"`
	// Active is whether that session is live, as the application says.
	Active   bool   `json:"active,omitempty"`
	Session  string `json:"session,omitempty"`
	Exercise int    `json:"exercise,omitempty"` // 1-based, while in progress
	Score    int    `json:"score"`
	Total    int    `json:"total"`
	// Recoveries are the times to recovery of the completed exercises.
	Recoveries []jsonconv.Duration `json:"recoveriesMs,omitempty"`
}

// LabView is a lab's page.
type LabView struct {
	ID        string
	Title     string
	Summary   string
	Lesson    []LessonPage
	Exercises []ExerciseView
	Quiz      string
	// Code: the learner writes the lab's controller, in the page's code
	// panel.
	Code bool
}

// LessonPage is one rendered lesson page.
type LessonPage struct {
	ID    string
	Title string
	HTML  template.HTML
}

// ExerciseView is an exercise as the page shows it.
type ExerciseView struct {
	ID           string
	Title        string
	Instructions template.HTML
	TimeLimit    time.Duration
	HasChaos     bool
	Hints        int
}

// SessionRef is a session's owner and place.
type SessionRef struct {
	ID      string `json:"id"`
	Learner string `json:"learner"`
	Lab     string `json:"lab"`
	State   string `json:"state"`
	// Active is whether the session is live, as the application says.
	Active   bool      `json:"active"`
	Exercise int       `json:"exercise"`
	Created  time.Time `json:"created"`
	// Asleep: nobody looked at the session for a while and its cluster
	// sleeps; the page says it wakes it.
	Asleep bool `json:"asleep,omitempty"`
}

// SummaryView is a session's summary page.
type SummaryView struct {
	Session   SessionRef
	LabTitle  string
	Exercises []ExerciseResult
	Quiz      *QuizScore
}

// ExerciseResult is one exercise's line in the summary.
type ExerciseResult struct {
	ID       string
	Title    string
	Score    int
	Total    int
	Passed   bool
	Recovery time.Duration
	Hints    int
}

// QuizScore is a graded quiz's score.
type QuizScore struct{ Correct, Total int }
