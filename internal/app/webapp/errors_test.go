package webapp

import (
	"errors"
	"fmt"
	"testing"

	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

func TestWebErrorKinds(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want error
	}{
		{fmt.Errorf("session x: %w", store.ErrNotFound), server.ErrNotFound},
		{fmt.Errorf("lab y: %w", session.ErrUnknownLab), server.ErrNotFound},
		{fmt.Errorf("check: %w", session.ErrOutOfOrder), server.ErrConflict},
		{fmt.Errorf("chaos: %w", session.ErrEnded), server.ErrConflict},
		{fmt.Errorf("start: %w", session.ErrActive), server.ErrConflict},
		{fmt.Errorf("session z: %w", session.ErrNotFound), server.ErrNotFound},
		{fmt.Errorf("console: %w", session.ErrNoCluster), server.ErrConflict},
		{fmt.Errorf("quiz failover: %w: answer every question", quiz.ErrBadAnswer), server.ErrInvalid},
		{fmt.Errorf("%w: session s is of lab rbac", session.ErrWrongQuiz), server.ErrConflict},
	} {
		got := webErr(tc.err)
		if !errors.Is(got, tc.want) || got.Error() != tc.err.Error() {
			t.Errorf("webErr(%v): got %v, want it kept and marked %v", tc.err, got, tc.want)
		}
	}
	if plain := errors.New("disk full"); webErr(plain) != plain {
		t.Error("an unexpected error was reclassified")
	}
}
