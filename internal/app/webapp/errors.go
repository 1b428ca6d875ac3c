package webapp

import (
	"errors"

	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// classified keeps err's message and lets the server tell what kind it is.
type classified struct{ err, kind error }

func (c classified) Error() string   { return c.err.Error() }
func (c classified) Unwrap() []error { return []error{c.err, c.kind} }

// webErr marks the application layer's errors with the server's kinds.
func webErr(err error) error {
	switch {
	case err == nil:
		return nil
	case refusal(err) != nil:
		return refusal(err)
	case errors.Is(err, session.ErrNotFound), errors.Is(err, store.ErrNotFound), errors.Is(err, session.ErrUnknownLab):
		return classified{err, server.ErrNotFound}
	case errors.Is(err, session.ErrOutOfOrder), errors.Is(err, session.ErrEnded), errors.Is(err, session.ErrNotReady),
		errors.Is(err, session.ErrActive), errors.Is(err, session.ErrTransition), errors.Is(err, session.ErrUnsupported),
		errors.Is(err, session.ErrNoCluster), errors.Is(err, session.ErrWrongQuiz):
		return classified{err, server.ErrConflict}
	case errors.Is(err, quiz.ErrBadAnswer):
		return classified{err, server.ErrInvalid}
	}
	return err
}
