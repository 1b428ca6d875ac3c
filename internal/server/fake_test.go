package server

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/quiz"
)

// fakeApp is an Application in memory: the server's own interface, so the
// handlers' security and routing are tested without clusters.
type fakeApp struct {
	mu       sync.Mutex
	sessions map[string]*SessionRef
	calls    []string
	// classes by join code; members by learner; rejoin codes to learners;
	// wrong codes per client.
	classes map[string]*fakeClass
	members map[string]*fakeMember
	rejoins map[string]string
	wrong   map[string]int
	// room is the instructor's side (fakeclass_test.go).
	room fakeRoom
	// quizzes are the sessions' graded quizzes.
	quizzes fakeQuizzes
}

type fakeClass struct {
	name         string
	labs         []string
	closed, full bool
	takenNames   []string
}

type fakeMember struct {
	Member
	class *fakeClass
}

func newFakeApp() *fakeApp {
	return &fakeApp{sessions: map[string]*SessionRef{
		"alice-1": {ID: "alice-1", Learner: "local", Lab: "failover", State: "in-exercise"},
		"bob-1":   {ID: "bob-1", Learner: "bob", Lab: "failover", State: "in-exercise"},
	}, classes: map[string]*fakeClass{
		"MORNING": {name: "morning", labs: []string{"rbac", "failover"}},
		"CLOSED":  {name: "evening", labs: []string{"failover"}, closed: true},
		"FULL":    {name: "weekend", labs: []string{"failover"}, full: true},
	}, members: map[string]*fakeMember{}, rejoins: map[string]string{}, wrong: map[string]int{}}
}

// fakeWrongCodes is how many wrong codes a client may send before it
// must wait.
const fakeWrongCodes = 3

func (f *fakeApp) Join(_ context.Context, client, code, name string) (*Member, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "join "+code+" "+name)
	if f.wrong[client] >= fakeWrongCodes {
		return nil, &Refusal{Reason: RefusalTooMany, Retry: 6 * time.Second, Err: fmt.Errorf("too many wrong codes: try again in 6s")}
	}
	c, ok := f.classes[strings.ToUpper(code)]
	switch {
	case !ok:
		f.wrong[client]++
		return nil, &Refusal{Reason: RefusalBadCode, Err: fmt.Errorf("unknown code: check the code and try again")}
	case strings.TrimSpace(name) == "":
		return nil, &Refusal{Reason: RefusalBadName, Err: fmt.Errorf("invalid display name: it is empty")}
	case c.closed:
		return nil, &Refusal{Reason: RefusalClosed, Err: fmt.Errorf("class %s: the class is closed", c.name)}
	case c.full:
		return nil, &Refusal{Reason: RefusalFull, Err: fmt.Errorf("class %s: the class is full", c.name)}
	case slices.Contains(c.takenNames, name):
		return nil, &Refusal{Reason: RefusalNameTaken, Err: fmt.Errorf("already exists: the name %q is taken", name)}
	}
	c.takenNames = append(c.takenNames, name)
	n := len(f.members) + 1
	m := &fakeMember{Member: Member{Learner: fmt.Sprintf("learner-%d", n), Name: name, Class: c.name}, class: c}
	f.members[m.Learner] = m
	rejoin := fmt.Sprintf("RJ%03d-SECRET", n)
	f.rejoins[rejoin] = m.Learner
	out := m.Member
	out.RejoinCode = rejoin
	return &out, nil
}

func (f *fakeApp) Rejoin(_ context.Context, client, code string) (*Member, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "rejoin")
	if f.wrong[client] >= fakeWrongCodes {
		return nil, &Refusal{Reason: RefusalTooMany, Retry: 6 * time.Second, Err: fmt.Errorf("too many wrong codes: try again in 6s")}
	}
	learner, ok := f.rejoins[strings.ToUpper(strings.TrimSpace(code))]
	if !ok {
		f.wrong[client]++
		return nil, &Refusal{Reason: RefusalBadCode, Err: fmt.Errorf("unknown code: check the code and try again")}
	}
	m := f.members[learner].Member
	return &m, nil
}

// member returns learner's class membership, nil for a learner in none.
func (f *fakeApp) member(learner string) *fakeMember {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.members[learner]
}

func (f *fakeApp) record(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.mu.Unlock()
}

// Catalogue lists failover, rbac and quota; a class member gets their
// class's labs, in the class's order, with their own sessions' states.
func (f *fakeApp) Catalogue(_ context.Context, learner, lang string) ([]LabEntry, error) {
	title := "Failover: lose the primary"
	if lang == "ko" {
		title = "페일오버: 프라이머리 잃기"
	}
	all := []LabEntry{{ID: "failover", Title: title, Summary: "Delete the primary.", Duration: jsonconv.Duration(15 * time.Minute),
		State: "completed", Session: "alice-1", Score: 5, Total: 5, Recoveries: []jsonconv.Duration{jsonconv.Duration(1500 * time.Millisecond)}},
		{ID: "rbac", Title: "RBAC: the operator loses a verb", Summary: "Find the missing permission.", Duration: jsonconv.Duration(10 * time.Minute)},
		{ID: "quota", Title: "Quota: no room for a replica", Summary: "Find what blocks the pods.", Duration: jsonconv.Duration(10 * time.Minute)}}
	m := f.member(learner)
	if m == nil {
		return all, nil
	}
	var out []LabEntry
	for _, id := range m.class.labs {
		for _, e := range all {
			if e.ID != id {
				continue
			}
			entry := LabEntry{ID: e.ID, Title: e.Title, Summary: e.Summary, Duration: e.Duration}
			if s, err := f.LabSession(context.Background(), learner, id); err == nil {
				entry.State, entry.Active, entry.Session, entry.Exercise = s.State, s.Active, s.ID, 1
			}
			out = append(out, entry)
		}
	}
	return out, nil
}

func (f *fakeApp) Lab(_ context.Context, id, lang string) (*LabView, error) {
	if id != "failover" {
		return nil, fmt.Errorf("lab %q: %w", id, ErrNotFound)
	}
	return &LabView{ID: id, Title: "Failover", Lesson: []LessonPage{{ID: "failover", Title: "Failover",
		HTML: template.HTML(`<p>lesson</p><div class="console-commands"><button class="console-run" data-command="kubectl get pods">run</button></div>`)}},
		Exercises: []ExerciseView{{ID: "delete-primary", Title: "Delete the primary", Instructions: "<p>do it</p>", HasChaos: true}}}, nil
}

// LabSession is the learner's newest session of lab: the fake's sessions
// are made one at a time, so the newest is the last created.
func (f *fakeApp) LabSession(_ context.Context, learner, lab string) (*SessionRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out *SessionRef
	for _, s := range f.sessions {
		if s.Learner == learner && s.Lab == lab && (out == nil || s.Created.After(out.Created)) {
			c := *s
			c.Active = liveState(c.State)
			out = &c
		}
	}
	if out == nil {
		return nil, fmt.Errorf("no session of lab %s: %w", lab, ErrNotFound)
	}
	return out, nil
}

// liveState is what the application says of a session's state.
func liveState(st string) bool {
	return st == "provisioning" || st == "ready" || st == "in-exercise"
}

// parts is Config with every part of the application layer a.
func parts(c Config, a Application) Config {
	c.Learning, c.Classroom, c.SignIns = a, a, a
	return c
}

// readyFunc is Operations from a function.
type readyFunc func(context.Context) error

func (f readyFunc) Ready(ctx context.Context) error { return f(ctx) }

func (f *fakeApp) Session(_ context.Context, id string) (*SessionRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.sessions[id]
	if !ok {
		return nil, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	c := *s
	c.Active = liveState(c.State)
	return &c, nil
}

func (f *fakeApp) Status(_ context.Context, id string) (any, error) {
	f.record("status " + id)
	return f.Session(context.Background(), id)
}

func (f *fakeApp) Start(_ context.Context, learner, lab, lang string, progress func(Update)) (any, error) {
	f.record("start " + lab)
	if !slices.Contains([]string{"failover", "rbac", "quota"}, lab) {
		return nil, fmt.Errorf("lab %q: %w", lab, ErrNotFound)
	}
	id := "alice-2"
	if m := f.member(learner); m != nil {
		switch {
		case m.class.closed:
			return nil, &Refusal{Reason: RefusalClosed, Err: fmt.Errorf("class %s: the class is closed", m.class.name)}
		case !slices.Contains(m.class.labs, lab):
			return nil, &Refusal{Reason: RefusalNotInClass, Err: fmt.Errorf("lab %q: lab is not part of the class %s", lab, m.class.name)}
		}
		id = learner + "-" + lab
	}
	progress(Update{Kind: "step", Message: "create cluster", Data: map[string]any{"phase": "cluster", "index": 0, "message": "create cluster"}})
	progress(Update{Kind: "step", Message: "create cluster", Data: map[string]any{"phase": "cluster", "index": 0, "message": "create cluster", "done": true}})
	ref := &SessionRef{ID: id, Learner: learner, Lab: lab, State: "ready"}
	f.mu.Lock()
	f.sessions[ref.ID] = ref
	f.mu.Unlock()
	return ref, nil
}

func (f *fakeApp) Chaos(_ context.Context, id, exercise string, _ func(Update)) (any, error) {
	f.record("chaos " + id + " " + exercise)
	return map[string]string{"id": id}, nil
}

func (f *fakeApp) Check(_ context.Context, id string, _ func(Update)) (any, error) {
	f.record("check " + id)
	return map[string]bool{"passed": true}, nil
}

func (f *fakeApp) Hint(_ context.Context, id string) (any, error) {
	f.record("hint " + id)
	return map[string]any{}, nil
}

func (f *fakeApp) Reset(_ context.Context, id string, _ func(Update)) (any, error) {
	f.record("reset " + id)
	return map[string]any{}, nil
}

func (f *fakeApp) Stop(_ context.Context, id string, _ func(Update)) (any, error) {
	f.record("stop " + id)
	return map[string]any{}, nil
}

// fakeTimeline is how many events each fake session's timeline holds, and
// fakePage the most one read returns: a page that shows a timeline reads
// it in pages.
const fakeTimeline, fakePage = 1203, 500

// Timeline pages through fakeTimeline events: the move to in-exercise,
// then console commands.
func (f *fakeApp) Timeline(_ context.Context, id string, after int64, limit int) ([]Update, bool, error) {
	if limit <= 0 || limit > fakePage {
		limit = fakePage
	}
	var out []Update
	for seq := after + 1; seq <= fakeTimeline && len(out) < limit; seq++ {
		u := Update{Seq: seq, Session: id, Kind: "console", Message: fmt.Sprintf("$ kubectl get pods (%d)", seq)}
		if seq == 1 {
			u.Kind, u.Message = "state", "ready → in-exercise"
		}
		out = append(out, u)
	}
	return out, after+int64(len(out)) < fakeTimeline, nil
}

var fakeQuiz = &quiz.Quiz{ID: "failover", Title: locale.Text{En: "Failover", Ko: "페일오버"}, Questions: []quiz.Question{{
	ID: "q1", Type: "single", Prompt: locale.Text{En: "Who picks the new primary?", Ko: "누가 새 프라이머리를 고르나요?"},
	Choices:     []quiz.Choice{{ID: "a", Text: locale.Text{En: "the operator", Ko: "오퍼레이터"}, Correct: true}, {ID: "b", Text: locale.Text{En: "etcd", Ko: "etcd"}}},
	Explanation: locale.Text{En: "The operator elects the most advanced replica.", Ko: "오퍼레이터가 가장 앞선 레플리카를 선출합니다."},
}}}

// fakeQuizzes are the fake's graded quizzes per session: the quiz
// package's own rules (a whole submission, one graded attempt, answers
// disclosed once final), kept in memory instead of the store.
type fakeQuizzes struct {
	standing map[string]quiz.Standing
	grade    map[string]quiz.Result
}

func (f *fakeApp) Quiz(_ context.Context, id string) (*quiz.View, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, grade := f.quizStanding(id)
	v := quiz.NewView(fakeQuiz, st, grade)
	return &v, nil
}

func (f *fakeApp) Answer(ctx context.Context, id string, answers quiz.Answers) (*quiz.Outcome, error) {
	f.record(fmt.Sprintf("answer %s %v", id, answers))
	if err := fakeQuiz.CheckSubmission(answers); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	res, err := quiz.Grade(ctx, fakeQuiz, answers, nil)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	st, grade := f.quizStanding(id)
	next, graded := st.Submit(res.Correct == res.Total)
	if graded {
		if f.quizzes.standing == nil {
			f.quizzes = fakeQuizzes{standing: map[string]quiz.Standing{}, grade: map[string]quiz.Result{}}
		}
		f.quizzes.standing[id], f.quizzes.grade[id] = next, res
		grade = &res
	}
	out := quiz.NewOutcome(*grade, next, graded)
	return &out, nil
}

// quizStanding is session id's standing and grade; f.mu is held.
func (f *fakeApp) quizStanding(id string) (quiz.Standing, *quiz.Result) {
	st, ok := f.quizzes.standing[id]
	if !ok {
		return quiz.Standing{Allowed: fakeQuiz.AttemptsAllowed()}, nil
	}
	g := f.quizzes.grade[id]
	return st, &g
}

func (f *fakeApp) Summary(_ context.Context, id, lang string) (*SummaryView, error) {
	ref, err := f.Session(context.Background(), id)
	if err != nil {
		return nil, err
	}
	return &SummaryView{Session: *ref, LabTitle: "Failover", Exercises: []ExerciseResult{{ID: "delete-primary", Title: "Delete the primary",
		Score: 5, Total: 5, Passed: true, Recovery: 1500 * time.Millisecond}}, Quiz: &QuizScore{Correct: 1, Total: 1}}, nil
}

// fakeConsole echoes the line it was given.
type fakeConsole struct{}

func (fakeConsole) Run(_ context.Context, session, line, stdin string, out io.Writer) error {
	_, err := fmt.Fprintf(out, "ran %q in %s with %d bytes of stdin\n", line, session, len(stdin))
	return err
}

// Apply reports the line it would have run, and for YAML with "bad:" on
// a line, a failure pointing there.
func (f fakeConsole) Apply(ctx context.Context, session, yaml string, dryRun bool) (ApplyResult, error) {
	line := "kubectl apply -f -"
	if dryRun {
		line += " --dry-run=server"
	}
	var out strings.Builder
	_ = f.Run(ctx, session, line, yaml, &out)
	for i, l := range strings.Split(yaml, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "bad:") {
			return ApplyResult{Output: out.String(), Error: "refused: bad field", Line: i + 1}, nil
		}
	}
	return ApplyResult{OK: true, Output: out.String()}, nil
}

// Complete offers the resource types that start like the line's last word.
func (fakeConsole) Complete(_ context.Context, session, line string) (Completion, error) {
	from := strings.LastIndexByte(line, ' ') + 1
	var out []string
	for _, w := range []string{"pods", "podtemplates", "postgresclusters", "services"} {
		if strings.HasPrefix(w, line[from:]) {
			out = append(out, w)
		}
	}
	return Completion{From: from, Candidates: out}, nil
}

// fakeT0 is when the fake debrief's session began.
var fakeT0 = time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)

// Debrief is a session of two minutes and a half: started, broken at
// 1:00, a failing check at 1:30, a console command at 1:40, a passing
// check and the recovery at 2:00, the quiz at the very end; a log line
// at 0:10, 1:10 and 2:10.
func (f *fakeApp) Debrief(_ context.Context, id string) (*Debrief, error) {
	at := func(s int) time.Time { return fakeT0.Add(time.Duration(s) * time.Second) }
	report := func(passed bool) map[string]any {
		reason := "prod-db-rw has no endpoints"
		if passed {
			reason = "prod-db-rw points at prod-db-1"
		}
		return map[string]any{"report": map[string]any{"passed": passed, "results": []map[string]any{
			{"kind": "serviceEndpointsPrimary", "passed": passed, "reason": reason},
			{"kind": "conditionTrue", "passed": true, "reason": "Ready is True"}}}}
	}
	return &Debrief{Session: id, Lab: "failover", State: "completed", Start: at(0), End: at(150).Add(50 * time.Millisecond), LogSource: "recorded", Events: []Update{
		{Seq: 1, Kind: "state", Message: "ready → in-exercise", Time: at(0)},
		{Seq: 2, Kind: "chaos", Exercise: "delete-primary", Message: "deleted pod prod-db-0", Time: at(60)},
		{Seq: 3, Kind: "check", Exercise: "delete-primary", Message: "1 of 2 checks pass", Time: at(90), Data: report(false)},
		{Seq: 4, Kind: "console", Message: "$ kubectl get pods (exit 0, 120ms)", Time: at(100)},
		{Seq: 5, Kind: "check", Exercise: "delete-primary", Message: "2 of 2 checks pass", Time: at(120), Data: report(true)},
		{Seq: 6, Kind: "recovered", Exercise: "delete-primary", Message: "recovered in 58s", Time: at(120)},
		// The last event ends the axis, off the scrubber's step.
		{Seq: 7, Kind: "quiz", Message: "quiz: 3 of 3", Time: at(150).Add(50 * time.Millisecond)},
	}, Log: []LogLine{
		{Time: at(10), Level: "info", Object: "default/prod-db", Message: "reconciled"},
		{Time: at(70), Level: "info", Object: "default/prod-db", Message: "failing over to prod-db-1"},
		{Time: at(130), Level: "info", Object: "default/prod-db", Message: "promoted prod-db-1"},
	}}, nil
}
