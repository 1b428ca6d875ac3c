package server

import (
	"context"
	"fmt"
	"html/template"
	"slices"
	"sync"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
)

// fakeLearning is Learning in memory: three labs; the local learner's
// session alice-1 and another learner's bob-1; a long timeline, a
// summary and a debrief for every session; joining a class
// (fakejoin_test.go) and its graded quiz (fakequiz_test.go). It records
// the calls that act on a session, and joins.
type fakeLearning struct {
	fakeCalls
	// classes are the classes a learner joins: the classroom's.
	classes *fakeClassroom

	mu       sync.Mutex
	sessions map[string]*SessionRef
	// members by learner; rejoin codes to learners; wrong codes per
	// client.
	members map[string]Member
	rejoins map[string]string
	wrong   map[string]int
	quizzes fakeQuizzes
}

func newFakeLearning(classes *fakeClassroom) *fakeLearning {
	return &fakeLearning{classes: classes, sessions: map[string]*SessionRef{
		"alice-1": {ID: "alice-1", Learner: "local", Lab: "failover", State: "in-exercise"},
		"bob-1":   {ID: "bob-1", Learner: "bob", Lab: "failover", State: "in-exercise"},
	}, members: map[string]Member{}, rejoins: map[string]string{}, wrong: map[string]int{}}
}

// fakeLabs are the labs of the catalogue, as the local learner sees it.
func fakeLabs(lang string) []LabEntry {
	title := "Failover: lose the primary"
	if lang == "ko" {
		title = "페일오버: 프라이머리 잃기"
	}
	return []LabEntry{{ID: "failover", Title: title, Summary: "Delete the primary.", Duration: jsonconv.Duration(15 * time.Minute),
		State: "completed", Session: "alice-1", Score: 5, Total: 5, Recoveries: []jsonconv.Duration{jsonconv.Duration(1500 * time.Millisecond)}},
		{ID: "rbac", Title: "RBAC: the operator loses a verb", Summary: "Find the missing permission.", Duration: jsonconv.Duration(10 * time.Minute)},
		{ID: "quota", Title: "Quota: no room for a replica", Summary: "Find what blocks the pods.", Duration: jsonconv.Duration(10 * time.Minute)}}
}

// Catalogue lists failover, rbac and quota; a class member gets their
// class's labs, in the class's order, with their own sessions' states.
func (f *fakeLearning) Catalogue(ctx context.Context, learner, lang string) ([]LabEntry, error) {
	all := fakeLabs(lang)
	class := f.classOf(learner)
	if class == "" {
		return all, nil
	}
	c, _ := f.classes.class(class)
	var out []LabEntry
	for _, id := range c.labs {
		i := slices.IndexFunc(all, func(e LabEntry) bool { return e.ID == id })
		if i < 0 {
			continue
		}
		e := all[i]
		entry := LabEntry{ID: e.ID, Title: e.Title, Summary: e.Summary, Duration: e.Duration}
		if s, err := f.LabSession(ctx, learner, id); err == nil {
			entry.State, entry.Active, entry.Session, entry.Exercise = s.State, s.Active, s.ID, 1
		}
		out = append(out, entry)
	}
	return out, nil
}

func (f *fakeLearning) Lab(_ context.Context, id, lang string) (*LabView, error) {
	if id != "failover" {
		return nil, fmt.Errorf("lab %q: %w", id, ErrNotFound)
	}
	return &LabView{ID: id, Title: "Failover", Lesson: []LessonPage{{ID: "failover", Title: "Failover",
		HTML: template.HTML(`<p>lesson</p><div class="console-commands"><button class="console-run" data-command="kubectl get pods">run</button></div>`)}},
		Exercises: []ExerciseView{{ID: "delete-primary", Title: "Delete the primary", Instructions: "<p>do it</p>", HasChaos: true}}}, nil
}

// LabSession is the learner's newest session of lab.
func (f *fakeLearning) LabSession(_ context.Context, learner, lab string) (*SessionRef, error) {
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

func (f *fakeLearning) Session(_ context.Context, id string) (*SessionRef, error) {
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

// setState moves session id to state.
func (f *fakeLearning) setState(id, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions[id].State = state
}

func (f *fakeLearning) Status(ctx context.Context, id string) (any, error) {
	f.record("status " + id)
	return f.Session(ctx, id)
}

func (f *fakeLearning) Wake(ctx context.Context, id string, _ func(Update)) (any, error) {
	f.record("wake " + id)
	return f.Session(ctx, id)
}

// Start makes the local learner's session alice-2, a member's
// <learner>-<lab> when the lab is one of their class's.
func (f *fakeLearning) Start(_ context.Context, learner, lab, lang string, progress func(Update)) (any, error) {
	if !slices.Contains([]string{"failover", "rbac", "quota"}, lab) {
		return nil, fmt.Errorf("lab %q: %w", lab, ErrNotFound)
	}
	id := "alice-2"
	if class := f.classOf(learner); class != "" {
		if c, _ := f.classes.class(class); !slices.Contains(c.labs, lab) {
			return nil, &Refusal{Reason: RefusalNotInClass, Err: fmt.Errorf("lab %q: lab is not part of the class %s", lab, c.name)}
		}
		id = learner + "-" + lab
	}
	progress(Update{Kind: "step", Message: "create cluster", Data: map[string]any{"phase": "cluster", "index": 0, "message": "create cluster"}})
	progress(Update{Kind: "step", Message: "create cluster", Data: map[string]any{"phase": "cluster", "index": 0, "message": "create cluster", "done": true}})
	ref := &SessionRef{ID: id, Learner: learner, Lab: lab, State: "ready", Created: time.Now()}
	f.mu.Lock()
	f.sessions[ref.ID] = ref
	f.mu.Unlock()
	return ref, nil
}

func (f *fakeLearning) Chaos(_ context.Context, id, exercise string, _ func(Update)) (any, error) {
	f.record("chaos " + id + " " + exercise)
	return map[string]string{"id": id}, nil
}

func (f *fakeLearning) Check(_ context.Context, id string, _ func(Update)) (any, error) {
	f.record("check " + id)
	return map[string]bool{"passed": true}, nil
}

func (f *fakeLearning) Hint(_ context.Context, id string) (any, error) {
	f.record("hint " + id)
	return map[string]any{}, nil
}

func (f *fakeLearning) Reset(_ context.Context, id string, _ func(Update)) (any, error) {
	f.record("reset " + id)
	return map[string]any{}, nil
}

func (f *fakeLearning) Stop(_ context.Context, id string, _ func(Update)) (any, error) {
	f.record("stop " + id)
	return map[string]any{}, nil
}

// fakeTimeline is how many events each fake session's timeline holds, and
// fakePage the most one read returns: a page that shows a timeline reads
// it in pages.
const fakeTimeline, fakePage = 1203, 500

// Timeline pages through fakeTimeline events: the move to in-exercise,
// then console commands.
func (f *fakeLearning) Timeline(_ context.Context, id string, after int64, limit int) ([]Update, bool, error) {
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

func (f *fakeLearning) Summary(ctx context.Context, id, lang string) (*SummaryView, error) {
	ref, err := f.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	return &SummaryView{Session: *ref, LabTitle: "Failover", Exercises: []ExerciseResult{{ID: "delete-primary", Title: "Delete the primary",
		Score: 5, Total: 5, Passed: true, Recovery: 1500 * time.Millisecond}}, Quiz: &QuizScore{Correct: 1, Total: 1}}, nil
}

// fakeT0 is when the fake debrief's session began.
var fakeT0 = time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)

// Debrief is a session of two minutes and a half: started, broken at
// 1:00, a failing check at 1:30, a console command at 1:40, a passing
// check and the recovery at 2:00, the quiz at the very end; a log line
// at 0:10, 1:10 and 2:10.
func (f *fakeLearning) Debrief(_ context.Context, id string) (*Debrief, error) {
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
