package console

import "errors"

// ErrRefused matches every *RefusedError with errors.Is.
var ErrRefused = errors.New("refused by the console")

// RefusedError is a command line the console does not run: shell syntax, a
// subcommand or flag outside the allow-list, input it cannot accept, or a
// learner's caps on commands at once. Its message is one line written for
// the learner. No process was started.
type RefusedError struct {
	Msg string
	// Err, when set, says which kind of refusal it is (ErrTooMany).
	Err error
}

func (e *RefusedError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

// Unwrap gives the kind of refusal, if any.
func (e *RefusedError) Unwrap() error { return e.Err }

func refuse(msg string) error { return &RefusedError{Msg: msg} }

// ErrOutOfMemory is a command the kernel stopped at the ceiling of its
// learner's console group (Target.Cgroup): the learner's commands together
// asked for more memory than their budget gives the console.
var ErrOutOfMemory = errors.New("out of the console's memory")
