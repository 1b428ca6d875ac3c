package console

import "errors"

// ErrRefused matches every *RefusedError with errors.Is.
var ErrRefused = errors.New("refused by the console")

// RefusedError is a command line the console does not run: shell syntax, a
// subcommand or flag outside the allow-list, or input it cannot accept. Its
// message is one line written for the learner. No process was started.
type RefusedError struct {
	Msg string
}

func (e *RefusedError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

func refuse(msg string) error { return &RefusedError{Msg: msg} }
