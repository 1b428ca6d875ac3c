package webapp

import (
	"context"
	"errors"
	"io"
	"time"

	"oplab.dev/oplab/internal/board"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/session"
)

// classEventsEvery is how often a board's events are polled from the
// store.
const classEventsEvery = time.Second

func actor(in server.Instructor) class.Actor { return class.Actor{Name: in.Name, Admin: in.Admin} }

// classErr marks the class service's errors with the server's kinds.
func classErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, class.ErrChanged):
		return classified{err, server.ErrChanged}
	case errors.Is(err, class.ErrExists):
		return classified{err, server.ErrConflict}
	case errors.Is(err, class.ErrBadCredentials):
		return classified{err, server.ErrBadCredentials}
	case errors.Is(err, class.ErrForbidden):
		return classified{err, server.ErrForbidden}
	case errors.Is(err, class.ErrNotFound):
		return classified{err, server.ErrNotFound}
	case errors.Is(err, class.ErrInvalid):
		return classified{err, server.ErrInvalid}
	}
	return webErr(err)
}

// Classes lists the classes the instructor runs.
func (w *Web) Classes(ctx context.Context, in server.Instructor) ([]board.Class, error) {
	cs, err := w.a.Classes(ctx, actor(in))
	return cs, classErr(err)
}

// Board is the class's board (see app.App.Board), handed to the server as
// the application made it.
func (w *Web) Board(ctx context.Context, in server.Instructor, name, l string) (*board.View, error) {
	b, err := w.a.Board(ctx, actor(in), name, webLang(l))
	return b, classErr(err)
}

// ClassEvents sends the events of the class's sessions as the store
// records them.
func (w *Web) ClassEvents(ctx context.Context, in server.Instructor, name string) (<-chan server.Update, error) {
	evs, err := w.a.WatchClass(ctx, actor(in), name, classEventsEvery)
	if err != nil {
		return nil, classErr(err)
	}
	out := make(chan server.Update)
	go func() {
		defer close(out)
		for ev := range evs {
			u := server.Update{Seq: ev.Seq, Session: ev.Session, Kind: ev.Kind, Exercise: ev.Exercise, Message: ev.Message, Time: ev.At}
			select {
			case out <- u:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// ClassSession returns a session of the class.
func (w *Web) ClassSession(ctx context.Context, in server.Instructor, name, id string) (*server.SessionRef, error) {
	st, err := w.a.ClassSession(ctx, actor(in), name, id)
	if err != nil {
		return nil, classErr(err)
	}
	r := ref(st.ID, st.Learner, st.Lab, st.State, st.Exercise, st.Created)
	return &r, nil
}

// ResetLearner resets the current exercise of a session of the class.
func (w *Web) ResetLearner(ctx context.Context, in server.Instructor, name, id string, p func(server.Update)) (any, error) {
	st, err := w.a.ResetLearner(ctx, actor(in), name, id, progress(p))
	if err != nil {
		return nil, classErr(err)
	}
	return st, nil
}

// EndLearner ends a session of the class (app.EndedByInstructor).
func (w *Web) EndLearner(ctx context.Context, in server.Instructor, name, id string, p func(server.Update)) (any, error) {
	st, err := w.a.EndLearner(ctx, actor(in), name, id, progress(p))
	if err != nil {
		return nil, classErr(err)
	}
	return st, nil
}

// ExtendLearner adds time to the limit of a session of the class.
func (w *Web) ExtendLearner(ctx context.Context, in server.Instructor, name, id string, by time.Duration) (any, error) {
	st, err := w.a.ExtendLearner(ctx, actor(in), name, id, by, nil)
	if errors.Is(err, session.ErrInvalidExtension) {
		return nil, classified{err, server.ErrInvalid}
	}
	if err != nil {
		return nil, classErr(err)
	}
	return st, nil
}

// ClassesChanged makes the classes' warm pools follow a class created or
// edited here at once, rather than at the next housekeeping.
func (w *Web) ClassesChanged() { w.rt.ClassesChanged() }

// CloseClass closes the class.
func (w *Web) CloseClass(ctx context.Context, in server.Instructor, name string) error {
	_, err := w.a.CloseClass(ctx, actor(in), name)
	if err == nil {
		w.rt.ClassesChanged() // its warm sessions go now
	}
	return classErr(err)
}

// Export writes the class's results as CSV.
func (w *Web) Export(ctx context.Context, in server.Instructor, name string, out io.Writer) error {
	return classErr(w.a.ExportClass(ctx, actor(in), name, out))
}
