package webapp

import (
	"context"
	"errors"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/server"
)

// Join puts a learner in the class whose code is code (see
// class.Service.Join).
func (w *Web) Join(ctx context.Context, client, code, name string) (*server.Member, error) {
	if err := w.classesServed(); err != nil {
		return nil, err
	}
	j, err := w.a.Join(ctx, client, code, name)
	if err != nil {
		return nil, joinErr(w.counted(err))
	}
	return member(j), nil
}

// Rejoin lets a member back in with their personal rejoin code.
func (w *Web) Rejoin(ctx context.Context, client, code string) (*server.Member, error) {
	if err := w.classesServed(); err != nil {
		return nil, err
	}
	j, err := w.a.Rejoin(ctx, client, code)
	if err != nil {
		return nil, joinErr(w.counted(err))
	}
	return member(j), nil
}

// classesServed refuses class work where the server serves no class.
func (w *Web) classesServed() error {
	if !w.rt.Serving().Classes {
		return classified{app.ErrNoClasses, server.ErrConflict}
	}
	return nil
}

func member(j *class.Joined) *server.Member {
	return &server.Member{Learner: j.Learner, Name: j.Name, Class: j.Class, RejoinCode: j.RejoinCode}
}

// classRefusals name the class's refusals for the server, which says
// them in the learner's language.
var classRefusals = []struct {
	err    error
	reason string
}{
	{class.ErrBadCode, server.RefusalBadCode},
	{class.ErrTooManyAttempts, server.RefusalTooMany},
	{class.ErrFull, server.RefusalFull},
	{class.ErrClosed, server.RefusalClosed},
	{class.ErrNotOpen, server.RefusalNotOpen},
	{class.ErrEnded, server.RefusalEnded},
	{class.ErrNotInClass, server.RefusalNotInClass},
}

// refusal returns err as a server.Refusal when it is one of the class's
// refusals, else nil.
func refusal(err error) *server.Refusal {
	for _, r := range classRefusals {
		if errors.Is(err, r.err) {
			out := &server.Refusal{Reason: r.reason, Err: err}
			var wait *class.WaitError
			if errors.As(err, &wait) {
				out.Retry = wait.Wait
			}
			return out
		}
	}
	return nil
}

// joinErr is webErr for a join, where the class's invalid input can only
// be the display name, and a name that exists is taken in the class.
func joinErr(err error) error {
	switch {
	case errors.Is(err, class.ErrInvalid):
		return &server.Refusal{Reason: server.RefusalBadName, Err: err}
	case errors.Is(err, class.ErrExists):
		return &server.Refusal{Reason: server.RefusalNameTaken, Err: err}
	}
	return webErr(err)
}
