package server

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"oplab.dev/oplab/internal/board"
	"oplab.dev/oplab/internal/jsonconv"
)

// fakeRoom is the instructor's side of fakeApp: ada runs the class
// "morning" (whose member bob runs session bob-1), bob runs "evening",
// and root is an admin.
type fakeRoom struct {
	// owners of classes by name; closed classes.
	owners map[string]string
	closed map[string]bool
	// subs hear the events of a class's sessions.
	subs map[string][]chan Update
	// cell is bob's outcome on the one exercise.
	cell board.Cell
	// signIns are the sign-ins made, by their secret; removed
	// instructors; admin flags changed since fakePasswords; the device
	// each instructor sign-in was sent with (fakesignin_test.go).
	signIns map[string]*fakeSignIn
	removed map[string]bool
	admin   map[string]bool
	devices []string
}

var fakePasswords = map[string]struct {
	password string
	admin    bool
}{
	"ada":  {"ada-password", false},
	"bob":  {"bob-password", false},
	"root": {"root-password", true},
}

// fakeClassSessions are the sessions that run in each class.
var fakeClassSessions = map[string][]string{"morning": {"bob-1"}}

func (f *fakeApp) roomLocked() *fakeRoom {
	if f.room.owners == nil {
		f.room.owners = map[string]string{"morning": "ada", "evening": "bob"}
		f.room.closed = map[string]bool{}
		f.room.subs = map[string][]chan Update{}
		f.room.signIns, f.room.removed, f.room.admin = map[string]*fakeSignIn{}, map[string]bool{}, map[string]bool{}
	}
	return &f.room
}

func (f *fakeApp) SignInInstructor(_ context.Context, cr Credentials) (*SignIn, error) {
	f.record("instructor sign-in " + cr.Name)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.roomLocked().devices = append(f.room.devices, cr.Device)
	if f.wrong[cr.Client] >= fakeWrongCodes {
		return nil, &Refusal{Reason: RefusalTooMany, Retry: 6 * time.Second, Err: fmt.Errorf("too many wrong codes: try again in 6s")}
	}
	p, ok := fakePasswords[cr.Name]
	if !ok || p.password != cr.Password || f.room.removed[cr.Name] {
		f.wrong[cr.Client]++
		return nil, fmt.Errorf("instructor: %w", ErrBadCredentials)
	}
	return f.newSignInLocked(SignIn{Instructor: cr.Name, Admin: f.adminLocked(cr.Name)}, ""), nil
}

// managed checks that in runs class name.
func (f *fakeApp) managed(in Instructor, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	owner, ok := f.roomLocked().owners[name]
	switch {
	case !ok:
		return fmt.Errorf("class %q: %w", name, ErrNotFound)
	case !in.Admin && owner != in.Name:
		return fmt.Errorf("class %q is run by another instructor: %w", name, ErrForbidden)
	}
	return nil
}

func (f *fakeApp) Classes(_ context.Context, in Instructor) ([]board.Class, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []board.Class
	for _, name := range []string{"morning", "evening"} {
		owner := f.roomLocked().owners[name]
		if in.Admin || owner == in.Name {
			state := "open"
			if f.room.closed[name] {
				state = "closed"
			}
			out = append(out, board.Class{Name: name, Labs: []string{"failover"}, JoinCode: "ABCD-EFGH", Members: len(fakeClassSessions[name]),
				Owner: owner, State: state})
		}
	}
	return out, nil
}

// Board has a row per session of the class, live until it completes,
// whose actions are the application's (a reset only in the exercise).
func (f *fakeApp) Board(ctx context.Context, in Instructor, name, _ string) (*board.View, error) {
	if err := f.managed(in, name); err != nil {
		return nil, err
	}
	cs, _ := f.Classes(ctx, Instructor{Admin: true})
	b := &board.View{At: time.Now(), Columns: []board.Column{{Lab: "failover", Exercise: "delete-primary", Title: "Delete the primary", TimeLimit: jsonconv.Duration(5 * time.Minute)}}}
	for _, c := range cs {
		if c.Name == name {
			b.Class = c
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range fakeClassSessions[name] {
		s := f.sessions[id]
		r := board.Row{Learner: s.Learner, Name: "Bob", Session: s.ID, Lab: s.Lab, State: s.State, Exercise: "delete-primary",
			Cells: []board.Cell{f.room.cell}, Hints: f.room.cell.Hints, LastActivity: time.Now().Add(-time.Minute)}
		if f.room.cell.Passed {
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

func (f *fakeApp) ClassEvents(ctx context.Context, in Instructor, name string) (<-chan Update, error) {
	if err := f.managed(in, name); err != nil {
		return nil, err
	}
	ch := make(chan Update, 16)
	f.mu.Lock()
	f.room.subs[name] = append(f.room.subs[name], ch)
	f.mu.Unlock()
	out := make(chan Update)
	go func() {
		defer close(out)
		defer func() {
			f.mu.Lock()
			f.room.subs[name] = slices.DeleteFunc(f.room.subs[name], func(c chan Update) bool { return c == ch })
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

// classEvent changes session id as change says and tells the watchers of
// class name.
func (f *fakeApp) classEvent(name, id string, change func(s *SessionRef, cell *board.Cell), u Update) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f.sessions[id], &f.roomLocked().cell)
	u.Session = id
	for _, ch := range f.room.subs[name] {
		ch <- u
	}
}

func (f *fakeApp) ClassSession(ctx context.Context, in Instructor, name, id string) (*SessionRef, error) {
	if err := f.managed(in, name); err != nil {
		return nil, err
	}
	if !slices.Contains(fakeClassSessions[name], id) {
		return nil, fmt.Errorf("class %q has no session %q: %w", name, id, ErrNotFound)
	}
	return f.Session(ctx, id)
}

func (f *fakeApp) ResetLearner(ctx context.Context, in Instructor, name, id string, _ func(Update)) (any, error) {
	if _, err := f.ClassSession(ctx, in, name, id); err != nil {
		return nil, err
	}
	f.record("instructor reset " + id)
	return map[string]any{"id": id}, nil
}

func (f *fakeApp) EndLearner(ctx context.Context, in Instructor, name, id string, _ func(Update)) (any, error) {
	if _, err := f.ClassSession(ctx, in, name, id); err != nil {
		return nil, err
	}
	f.record("instructor end " + id)
	return map[string]any{"id": id}, nil
}

func (f *fakeApp) ExtendLearner(ctx context.Context, in Instructor, name, id string, by time.Duration) (any, error) {
	if _, err := f.ClassSession(ctx, in, name, id); err != nil {
		return nil, err
	}
	if by <= 0 {
		return nil, fmt.Errorf("extend by %s: %w", by, ErrInvalid)
	}
	f.record(fmt.Sprintf("instructor extend %s by %s", id, by))
	return map[string]any{"id": id}, nil
}

func (f *fakeApp) CloseClass(_ context.Context, in Instructor, name string) error {
	if err := f.managed(in, name); err != nil {
		return err
	}
	f.record("close " + name)
	f.mu.Lock()
	f.room.closed[name] = true
	f.mu.Unlock()
	return nil
}

func (f *fakeApp) Export(_ context.Context, in Instructor, name string, w io.Writer) error {
	if err := f.managed(in, name); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "learner,display_name\nbob,Bob\n")
	return err
}

// fakeClassVersion is the version of every fake class: an edit form that
// sends another is stale.
const fakeClassVersion = 3

func (f *fakeApp) CreateClass(_ context.Context, in Instructor, cf ClassForm) (*board.Class, error) {
	if cf.Name == "" || len(cf.Labs) == 0 {
		return nil, fmt.Errorf("invalid class %q: name it and choose a lab: %w", cf.Name, ErrInvalid)
	}
	f.record(fmt.Sprintf("create %s %v %s %s", cf.Name, cf.Labs, cf.Capacity, cf.TimeLimit))
	return &board.Class{Name: cf.Name, Labs: cf.Labs, JoinCode: "NEWCO-DE123", Owner: in.Name, State: "open", Version: 1}, nil
}

func (f *fakeApp) EditClass(_ context.Context, in Instructor, name string, cf ClassForm) (*board.Class, error) {
	if err := f.managed(in, name); err != nil {
		return nil, err
	}
	if cf.Version != fakeClassVersion {
		return nil, fmt.Errorf("class %q changed meanwhile: %w", name, ErrChanged)
	}
	f.record(fmt.Sprintf("edit %s %v new-code=%t reopen=%t", name, cf.Labs, cf.NewCode, cf.Reopen))
	return &board.Class{Name: name, Labs: cf.Labs, Owner: in.Name, State: "open", Version: fakeClassVersion + 1}, nil
}
