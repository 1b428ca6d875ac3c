package server

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"oplab.dev/oplab/internal/board"
	"oplab.dev/oplab/internal/jsonconv"
)

// fakeClassroom is Classroom in memory: ada runs the class morning
// (whose member bob runs session bob-1); bob runs evening, night (closed)
// and weekend (full); an admin sees and acts on every class. It records
// the calls that change a class or act on a learner.
type fakeClassroom struct {
	fakeCalls
	// sessions are the learning's: a class's sessions are learners'.
	sessions interface {
		Session(ctx context.Context, id string) (*SessionRef, error)
	}

	mu      sync.Mutex
	classes []*fakeClass // newest first
	// subs hear the events of a class's sessions.
	subs map[string][]chan Update
	// cell is bob's outcome on the one exercise.
	cell board.Cell
}

// fakeClass is a class: who runs it, the code that joins it, its labs in
// order, and whether it is closed or full.
type fakeClass struct {
	name, owner, code string
	labs              []string
	closed, full      bool
}

// fakeClassSessions are the sessions that run in each class.
var fakeClassSessions = map[string][]string{"morning": {"bob-1"}}

// fakeClassVersion is the version of every fake class: an edit form that
// sends another is stale.
const fakeClassVersion = 3

func newFakeClassroom() *fakeClassroom {
	return &fakeClassroom{classes: []*fakeClass{
		{name: "morning", owner: "ada", code: "MORNING", labs: []string{"rbac", "failover"}},
		{name: "evening", owner: "bob", code: "EVENING", labs: []string{"failover"}},
		{name: "night", owner: "bob", code: "CLOSED", labs: []string{"failover"}, closed: true},
		{name: "weekend", owner: "bob", code: "FULL", labs: []string{"failover"}, full: true},
	}, subs: map[string][]chan Update{}}
}

// find returns a copy of the first class ok says, and whether there was
// one.
func (f *fakeClassroom) find(ok func(c *fakeClass) bool) (fakeClass, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.IndexFunc(f.classes, ok); i >= 0 {
		return *f.classes[i], true
	}
	return fakeClass{}, false
}

// class is the class called name; byCode the class code joins.
func (f *fakeClassroom) class(name string) (fakeClass, bool) {
	return f.find(func(c *fakeClass) bool { return c.name == name })
}

func (f *fakeClassroom) byCode(code string) (fakeClass, bool) {
	return f.find(func(c *fakeClass) bool { return c.code == strings.ToUpper(code) })
}

// isClosed is whether class name is closed ("": a learner in no class).
func (f *fakeClassroom) isClosed(name string) bool {
	c, ok := f.class(name)
	return ok && c.closed
}

// setClosed closes or opens class name.
func (f *fakeClassroom) setClosed(name string, closed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.classes {
		if c.name == name {
			c.closed = closed
		}
	}
}

// managed checks that in runs class name.
func (f *fakeClassroom) managed(in Instructor, name string) error {
	c, ok := f.class(name)
	switch {
	case !ok:
		return fmt.Errorf("class %q: %w", name, ErrNotFound)
	case !in.Admin && c.owner != in.Name:
		return fmt.Errorf("class %q is run by another instructor: %w", name, ErrForbidden)
	}
	return nil
}

// view is c as the dashboard shows it.
func (c fakeClass) view() board.Class {
	state := "open"
	if c.closed {
		state = "closed"
	}
	return board.Class{Name: c.name, Labs: c.labs, JoinCode: c.code, Members: len(fakeClassSessions[c.name]), Owner: c.owner, State: state}
}

func (f *fakeClassroom) Classes(_ context.Context, in Instructor) ([]board.Class, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []board.Class
	for _, c := range f.classes {
		if in.Admin || c.owner == in.Name {
			out = append(out, c.view())
		}
	}
	return out, nil
}

// Board has a row per session of the class, live until it completes,
// whose actions are the application's (a reset only in the exercise).
func (f *fakeClassroom) Board(ctx context.Context, in Instructor, name, _ string) (*board.View, error) {
	if err := f.managed(in, name); err != nil {
		return nil, err
	}
	c, _ := f.class(name)
	b := &board.View{At: time.Now(), Class: c.view(),
		Columns: []board.Column{{Lab: "failover", Exercise: "delete-primary", Title: "Delete the primary", TimeLimit: jsonconv.Duration(5 * time.Minute)}}}
	for _, id := range fakeClassSessions[name] {
		s, err := f.sessions.Session(ctx, id)
		if err != nil {
			return nil, err
		}
		f.mu.Lock()
		cell := f.cell
		f.mu.Unlock()
		r := board.Row{Learner: s.Learner, Name: "Bob", Session: s.ID, Lab: s.Lab, State: s.State, Exercise: "delete-primary",
			Cells: []board.Cell{cell}, Hints: cell.Hints, LastActivity: time.Now().Add(-time.Minute)}
		if cell.Passed {
			r.Passed = 1
		}
		if r.Active = s.State != "completed" && s.State != "expired"; r.Active {
			r.Actions = []string{board.Extend, board.End}
		}
		if s.State == "in-exercise" {
			r.T0, r.Cells[0].Current = time.Now().Add(-2*time.Minute), true
			r.Actions = append([]string{board.Reset}, r.Actions...)
		}
		b.Rows = append(b.Rows, r)
	}
	return b, nil
}

func (f *fakeClassroom) ClassEvents(ctx context.Context, in Instructor, name string) (<-chan Update, error) {
	if err := f.managed(in, name); err != nil {
		return nil, err
	}
	ch := make(chan Update, 16)
	f.mu.Lock()
	f.subs[name] = append(f.subs[name], ch)
	f.mu.Unlock()
	out := make(chan Update)
	go func() {
		defer close(out)
		defer func() {
			f.mu.Lock()
			f.subs[name] = slices.DeleteFunc(f.subs[name], func(c chan Update) bool { return c == ch })
			f.mu.Unlock()
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case u := <-ch:
				select {
				case out <- u:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// event makes cell bob's outcome and tells the watchers of class name of
// u, an event of session id.
func (f *fakeClassroom) event(name, id string, cell board.Cell, u Update) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cell = cell
	u.Session = id
	for _, ch := range f.subs[name] {
		ch <- u
	}
}

func (f *fakeClassroom) ClassSession(ctx context.Context, in Instructor, name, id string) (*SessionRef, error) {
	if err := f.managed(in, name); err != nil {
		return nil, err
	}
	if !slices.Contains(fakeClassSessions[name], id) {
		return nil, fmt.Errorf("class %q has no session %q: %w", name, id, ErrNotFound)
	}
	return f.sessions.Session(ctx, id)
}

func (f *fakeClassroom) ResetLearner(ctx context.Context, in Instructor, name, id string, _ func(Update)) (any, error) {
	if _, err := f.ClassSession(ctx, in, name, id); err != nil {
		return nil, err
	}
	f.record("instructor reset " + id)
	return map[string]any{"id": id}, nil
}

func (f *fakeClassroom) EndLearner(ctx context.Context, in Instructor, name, id string, _ func(Update)) (any, error) {
	if _, err := f.ClassSession(ctx, in, name, id); err != nil {
		return nil, err
	}
	f.record("instructor end " + id)
	return map[string]any{"id": id}, nil
}

func (f *fakeClassroom) ExtendLearner(ctx context.Context, in Instructor, name, id string, by time.Duration) (any, error) {
	if _, err := f.ClassSession(ctx, in, name, id); err != nil {
		return nil, err
	}
	if by <= 0 {
		return nil, fmt.Errorf("extend by %s: %w", by, ErrInvalid)
	}
	f.record(fmt.Sprintf("instructor extend %s by %s", id, by))
	return map[string]any{"id": id}, nil
}

func (f *fakeClassroom) CloseClass(_ context.Context, in Instructor, name string) error {
	if err := f.managed(in, name); err != nil {
		return err
	}
	f.record("close " + name)
	f.setClosed(name, true)
	return nil
}

func (f *fakeClassroom) Export(_ context.Context, in Instructor, name string, w io.Writer) error {
	if err := f.managed(in, name); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "learner,display_name\nbob,Bob\n")
	return err
}

func (f *fakeClassroom) CreateClass(_ context.Context, in Instructor, cf ClassForm) (*board.Class, error) {
	if cf.Name == "" || len(cf.Labs) == 0 {
		return nil, fmt.Errorf("invalid class %q: name it and choose a lab: %w", cf.Name, ErrInvalid)
	}
	f.record(fmt.Sprintf("create %s %v %s %s", cf.Name, cf.Labs, cf.Capacity, cf.TimeLimit))
	return &board.Class{Name: cf.Name, Labs: cf.Labs, JoinCode: "NEWCO-DE123", Owner: in.Name, State: "open", Version: 1}, nil
}

func (f *fakeClassroom) EditClass(_ context.Context, in Instructor, name string, cf ClassForm) (*board.Class, error) {
	if err := f.managed(in, name); err != nil {
		return nil, err
	}
	if cf.Version != fakeClassVersion {
		return nil, fmt.Errorf("class %q changed meanwhile: %w", name, ErrChanged)
	}
	f.record(fmt.Sprintf("edit %s %v new-code=%t reopen=%t", name, cf.Labs, cf.NewCode, cf.Reopen))
	return &board.Class{Name: name, Labs: cf.Labs, Owner: in.Name, State: "open", Version: fakeClassVersion + 1}, nil
}
