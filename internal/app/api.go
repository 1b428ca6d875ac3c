package app

import (
	"context"
	"io"
	"io/fs"

	"oplab.dev/oplab/internal/board"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/controllab"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// The App's methods are the whole application layer both front ends call:
// the CLI and the web adapter reach its parts (sessions, course, clusters,
// classes) through these and nothing else. Their results are the views of
// the packages below (session.Status, quiz.View, board.Class ...), which
// hold no credentials and no handles on the parts.

// ---- sessions --------------------------------------------------------------

// Resolve returns the session a learner's action means (see
// session.Manager.Resolve): id when given, else the active one, else the
// newest, of lab when lab is given.
func (a *App) Resolve(ctx context.Context, learner, lab, id string) (string, error) {
	return a.sessions.Resolve(ctx, learner, lab, id)
}

// Status returns session id's view.
func (a *App) Status(ctx context.Context, id string) (*session.Status, error) {
	return a.sessions.Status(ctx, id)
}

// Wake returns session id's view once it is awake: what its learner's
// page or command asks first (see session.Manager.Wake).
func (a *App) Wake(ctx context.Context, id string, progress session.Progress) (*session.Status, error) {
	return a.sessions.Wake(ctx, id, progress)
}

// SessionList lists a learner's sessions (everyone's when empty), newest
// first.
func (a *App) SessionList(ctx context.Context, learner string) ([]session.Summary, error) {
	return a.sessions.Sessions(ctx, learner)
}

// Timeline returns a page of session id's events after seq, oldest
// first: at most limit (session.MaxTimelinePage, and by default), and
// whether more follow.
func (a *App) Timeline(ctx context.Context, id string, after int64, limit int) (session.TimelinePage, error) {
	return a.sessions.Timeline(ctx, id, after, limit)
}

// HintCounts counts the hints shown in session id, by exercise.
func (a *App) HintCounts(ctx context.Context, id string) (map[string]int, error) {
	return a.sessions.HintCounts(ctx, id)
}

// Chaos starts the session's current exercise: its fault is injected.
func (a *App) Chaos(ctx context.Context, id, exercise string, progress session.Progress) (*session.Status, error) {
	return a.sessions.Chaos(ctx, id, exercise, progress)
}

// Check grades the session's current exercise.
func (a *App) Check(ctx context.Context, id string, progress session.Progress) (*session.CheckResult, error) {
	return a.sessions.Check(ctx, id, progress)
}

// Build builds the learner's module in session id's cell and, when it
// compiles and run is set, runs it as their controller (see
// session.Manager.Build), in a lab whose learner writes the controller.
func (a *App) Build(ctx context.Context, id string, files controllab.Files, run bool, progress session.Progress) (*session.BuildResult, error) {
	return a.sessions.Build(ctx, id, files, run, progress)
}

// BuildDir builds the module in dir, as the learner edits it in the
// terminal (see Build).
func (a *App) BuildDir(ctx context.Context, id, dir string, run bool, progress session.Progress) (*session.BuildResult, error) {
	files, err := controllab.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	return a.sessions.Build(ctx, id, files, run, progress)
}

// Module returns the learner's module in session id: as last built, or the
// lab's scaffold.
func (a *App) Module(ctx context.Context, id string) (controllab.Files, error) {
	return a.sessions.Module(ctx, id)
}

// WriteModule writes the learner's module in session id into dir, which
// must be new or empty, for them to edit with their own tools. It reports
// false, and writes nothing, for a lab in which the learner writes no
// controller.
func (a *App) WriteModule(ctx context.Context, id, dir string) (bool, error) {
	st, err := a.sessions.Status(ctx, id)
	if err != nil {
		return false, err
	}
	l, err := a.sessions.Lab(st.Lab)
	if err != nil {
		return false, err
	}
	if !l.LearnerWritesController() {
		return false, nil
	}
	files, err := a.sessions.Module(ctx, id)
	if err != nil {
		return false, err
	}
	return true, files.WriteNew(dir)
}

// CheckModuleDir says whether dir can take the module of lab labID when a
// session of it starts: nil for a lab without one, an error when dir holds
// anything.
func (a *App) CheckModuleDir(labID, dir string) error {
	l, err := a.sessions.Lab(labID)
	if err != nil || !l.LearnerWritesController() {
		return err
	}
	return controllab.CheckNewDir(dir)
}

// Hint shows the next hint the session has earned.
func (a *App) Hint(ctx context.Context, id string) (*session.HintResult, error) {
	return a.sessions.Hint(ctx, id)
}

// Reset puts the session's current exercise back before its fault.
func (a *App) Reset(ctx context.Context, id string, progress session.Progress) (*session.Status, error) {
	return a.sessions.Reset(ctx, id, progress)
}

// Stop ends the session and deletes its cluster, saying why.
func (a *App) Stop(ctx context.Context, id, reason string, progress session.Progress) (*session.Status, error) {
	return a.sessions.Stop(ctx, id, reason, progress)
}

// KubeconfigPath returns where the admin kubeconfig of session id's
// cluster is: only for a front end whose user is at this machine.
func (a *App) KubeconfigPath(ctx context.Context, id string) (string, error) {
	return a.sessions.KubeconfigPath(ctx, id)
}

// ConsoleTarget returns what the console needs to run a learner's command
// against session id's cluster.
func (a *App) ConsoleTarget(ctx context.Context, id string) (session.ConsoleTarget, error) {
	return a.sessions.ConsoleTarget(ctx, id)
}

// RecordConsole puts a console command on the session's timeline.
func (a *App) RecordConsole(ctx context.Context, id string, d session.ConsoleData) error {
	return a.sessions.RecordConsole(ctx, id, d)
}

// SelfTest runs labs' self-tests on a cluster of their own.
func (a *App) SelfTest(ctx context.Context, o session.SelfTestOptions) (*session.SelfTestRun, error) {
	return a.sessions.SelfTest(ctx, o)
}

// WatchGoals returns a watcher of the goals of sessions in exercise, so
// that a time to recovery is when the cluster recovered; the caller
// starts and stops it (a serving App runs one of its own).
func (a *App) WatchGoals(o session.WatchOptions) *session.Watcher {
	return a.sessions.Watcher(o)
}

// Warm returns how many warm sessions of a lab a pool holds.
func (a *App) Warm(ctx context.Context, pool, labID string) (ready, preparing int, err error) {
	return a.sessions.Warm(ctx, pool, labID)
}

// ---- quizzes ---------------------------------------------------------------

// QuizView returns the quiz session id takes, as its learner may see it.
func (a *App) QuizView(ctx context.Context, id string) (*quiz.View, error) {
	return a.sessions.QuizView(ctx, id)
}

// Answer grades a submission of quiz quizID ("": the session's own)
// with session id.
func (a *App) Answer(ctx context.Context, id, quizID string, answers quiz.Answers) (*quiz.Outcome, error) {
	return a.sessions.Quiz(ctx, id, quizID, answers)
}

// GradeQuiz grades a course-wide quiz, taken without a session.
func (a *App) GradeQuiz(ctx context.Context, quizID string, answers quiz.Answers) (*quiz.Outcome, error) {
	return a.sessions.GradeQuiz(ctx, quizID, answers)
}

// QuizSession returns the session a learner's answers to quiz quizID are
// recorded with (see session.Manager.QuizSession).
func (a *App) QuizSession(ctx context.Context, learner, id, quizID string) (string, error) {
	return a.sessions.QuizSession(ctx, learner, id, quizID)
}

// ---- the course ------------------------------------------------------------

// Lab returns lab id of the course.
func (a *App) Lab(id string) (*lab.Lab, error) { return a.course.Lab(id) }

// Quiz returns quiz id of the course.
func (a *App) Quiz(id string) (*quiz.Quiz, error) { return a.course.Quiz(id) }

// Content returns the course's lesson pages.
func (a *App) Content() fs.FS { return a.course.Sources.Content }

// ---- clusters --------------------------------------------------------------

// ProviderInfo describes the provider new sessions' clusters are made on.
func (a *App) ProviderInfo() cluster.Info { return a.clusters.Info() }

// ---- classes ---------------------------------------------------------------

// Join puts a learner in the class whose join code is code.
func (a *App) Join(ctx context.Context, client, code, name string) (*class.Joined, error) {
	return a.classes.Join(ctx, client, code, name)
}

// Rejoin lets a member back in with their personal rejoin code.
func (a *App) Rejoin(ctx context.Context, client, code string) (*class.Joined, error) {
	return a.classes.Rejoin(ctx, client, code)
}

// SignInLearner records a sign-in of learner.
func (a *App) SignInLearner(ctx context.Context, learner string) (*class.SignIn, error) {
	return a.classes.SignInLearner(ctx, learner)
}

// SignInInstructor checks an instructor's name and password and records
// their sign-in.
func (a *App) SignInInstructor(ctx context.Context, at class.Attempt) (*class.SignIn, error) {
	return a.classes.SignInInstructor(ctx, at)
}

// SignedIn returns sign-in id as it stands now.
func (a *App) SignedIn(ctx context.Context, id string) (*class.SignIn, error) {
	return a.classes.SignedIn(ctx, id)
}

// SignOut withdraws sign-in id.
func (a *App) SignOut(ctx context.Context, id string) error { return a.classes.SignOut(ctx, id) }

// Classes lists the classes actor may see, newest first.
func (a *App) Classes(ctx context.Context, actor class.Actor) ([]board.Class, error) {
	cs, err := a.classes.List(ctx, actor)
	if err != nil {
		return nil, err
	}
	out := make([]board.Class, 0, len(cs))
	for _, c := range cs {
		out = append(out, classView(c))
	}
	return out, nil
}

// Class returns class name.
func (a *App) Class(ctx context.Context, actor class.Actor, name string) (*board.Class, error) {
	return viewOf(a.classes.Get(ctx, actor, name))
}

// CreateClass makes a class.
func (a *App) CreateClass(ctx context.Context, actor class.Actor, sp class.Spec) (*board.Class, error) {
	return viewOf(a.classes.Create(ctx, actor, sp))
}

// EditClass changes a class.
func (a *App) EditClass(ctx context.Context, actor class.Actor, name string, ch class.Changes) (*board.Class, error) {
	return viewOf(a.classes.Edit(ctx, actor, name, ch))
}

// CloseClass closes a class to every learner.
func (a *App) CloseClass(ctx context.Context, actor class.Actor, name string) (*board.Class, error) {
	return viewOf(a.classes.Close(ctx, actor, name))
}

// ExportClass writes a class's results as CSV.
func (a *App) ExportClass(ctx context.Context, actor class.Actor, name string, w io.Writer) error {
	return a.classes.Export(ctx, actor, name, w)
}

// Members lists a class's members.
func (a *App) Members(ctx context.Context, actor class.Actor, name string) ([]class.Member, error) {
	return a.classes.Members(ctx, actor, name)
}

// AddInstructor adds an instructor (an admin when admin).
func (a *App) AddInstructor(ctx context.Context, name, password string, admin bool) (*class.Instructor, error) {
	return a.classes.AddInstructor(ctx, name, password, admin)
}

// RemoveInstructor removes an instructor and withdraws their sign-ins.
func (a *App) RemoveInstructor(ctx context.Context, actor class.Actor, name string) error {
	return a.classes.RemoveInstructor(ctx, actor, name)
}

// Instructors lists the instructors.
func (a *App) Instructors(ctx context.Context) ([]class.Instructor, error) {
	return a.classes.Instructors(ctx)
}

// Contained reports whether new sessions' clusters are contained (see
// cluster.Provider.Contained), and why not.
func (a *App) Contained() (bool, error) { return a.clusters.Contained() }

// StoreFile is the name of the store's file in the data directory.
const StoreFile = store.FileName

// ClusterKubeconfig returns where the admin kubeconfig of cluster name
// (made on this process's provider) is.
func (a *App) ClusterKubeconfig(name string) (string, error) { return a.clusters.KubeconfigPath(name) }
