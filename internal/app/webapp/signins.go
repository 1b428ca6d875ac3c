package webapp

import (
	"context"
	"errors"

	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/metrics"
	"oplab.dev/oplab/internal/server"
)

// SignInLearner records a sign-in of learner (see
// class.Service.SignInLearner).
func (w *Web) SignInLearner(ctx context.Context, learner string) (*server.SignIn, error) {
	si, err := w.a.SignInLearner(ctx, learner)
	if err != nil {
		return nil, classErr(err)
	}
	return signIn(si), nil
}

// SignInInstructor checks an instructor's name and password and records
// their sign-in (see class.Service.SignInInstructor).
func (w *Web) SignInInstructor(ctx context.Context, cr server.Credentials) (*server.SignIn, error) {
	si, err := w.a.SignInInstructor(ctx, class.Attempt{Client: cr.Client, Name: cr.Name, Password: cr.Password, Device: cr.Device})
	if err != nil {
		return nil, classErr(w.counted(err))
	}
	return signIn(si), nil
}

// SignedIn returns a sign-in as it stands now (see
// class.Service.SignedIn).
func (w *Web) SignedIn(ctx context.Context, id string) (*server.SignIn, error) {
	si, err := w.a.SignedIn(ctx, id)
	if errors.Is(err, class.ErrSignedOut) {
		return nil, classified{err, server.ErrSignedOut}
	}
	if err != nil {
		return nil, err
	}
	return signIn(si), nil
}

// SignOut withdraws a sign-in.
func (w *Web) SignOut(ctx context.Context, id string) error {
	return w.a.SignOut(ctx, id)
}

func signIn(si *class.SignIn) *server.SignIn {
	return &server.SignIn{ID: si.ID, Learner: si.Learner, Instructor: si.Instructor, Admin: si.Admin, Expires: si.Expires}
}

// counted counts err in the metrics when it refuses too many attempts
// (wrong codes or passwords, or sign-ins beyond the hashing gate), so a
// flood shows on /metrics; it returns err.
func (w *Web) counted(err error) error {
	if errors.Is(err, class.ErrTooManyAttempts) {
		w.rt.Metrics().Refused(metrics.RefusedRateLimit)
	}
	return err
}
