package class

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"oplab.dev/oplab/internal/store"
)

// DefaultSignInTTL is how long a sign-in lasts.
const DefaultSignInTTL = 30 * 24 * time.Hour

// signInsKept bounds the sign-ins one person holds at once (browsers,
// devices); signing in again beyond it signs the oldest out.
const signInsKept = 20

// SignIn is someone signed in: a learner (a class's member, or the
// learner of a single-user oplab) or an instructor. A front end's cookie
// carries its ID; the record, not the cookie, says on each request
// whether it still holds and what it may do, so a sign-out, a closed
// class, an ended membership or a removed instructor takes effect on the
// next request.
type SignIn struct {
	// ID is the secret the cookie carries, set when the sign-in is made
	// (the store keeps only its hash).
	ID         string `json:"-"`
	Learner    string `json:"learner,omitempty"`
	Instructor string `json:"instructor,omitempty"`
	// Admin is read from the instructor's record each time.
	Admin   bool      `json:"admin,omitempty"`
	Expires time.Time `json:"expires"`
}

// SignInLearner records a sign-in for learner, whom a front end has just
// let in (Join, Rejoin, or the single-user server's sign-in link). A
// member's sign-in is bound to their class: it ends when the class
// closes or the membership ends.
func (s *Service) SignInLearner(ctx context.Context, learner string) (*SignIn, error) {
	if learner == "" {
		return nil, fmt.Errorf("%w: sign in: no learner", ErrInvalid)
	}
	rec := store.SignIn{Learner: learner}
	m, err := s.o.Store.Member(ctx, learner)
	switch {
	case err == nil:
		rec.ClassID = m.ClassID
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return s.record(ctx, rec)
}

// SignInInstructor checks an instructor's attempt (see Attempt and
// Verify) and records their sign-in.
func (s *Service) SignInInstructor(ctx context.Context, at Attempt) (*SignIn, error) {
	in, err := s.verifyAttempt(ctx, at)
	if err != nil {
		return nil, err
	}
	si, err := s.record(ctx, store.SignIn{Instructor: in.Name})
	if err != nil {
		return nil, err
	}
	si.Admin = in.Admin
	s.log.Info("instructor signed in", "name", in.Name)
	return si, nil
}

func (s *Service) record(ctx context.Context, rec store.SignIn) (*SignIn, error) {
	secret := newSecret()
	now := s.now().UTC()
	rec.ID, rec.Created, rec.Expires = hashSignIn(secret), now, now.Add(s.o.SignInTTL)
	if err := s.o.Store.CreateSignIn(ctx, &rec, signInsKept); err != nil {
		return nil, err
	}
	return &SignIn{ID: secret, Learner: rec.Learner, Instructor: rec.Instructor, Expires: rec.Expires}, nil
}

// SignedIn returns sign-in id as it stands now: ErrSignedOut when it was
// withdrawn or has expired, or when what it is bound to is gone (the
// learner's membership, their class open, the instructor). A front end
// calls it on every signed-in request; it is one indexed read.
func (s *Service) SignedIn(ctx context.Context, id string) (*SignIn, error) {
	if id == "" || len(id) > 128 {
		return nil, ErrSignedOut
	}
	st, err := s.o.Store.SignInState(ctx, hashSignIn(id))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, ErrSignedOut
	case err != nil:
		return nil, err
	case !s.now().Before(st.Expires):
		return nil, fmt.Errorf("%w: the sign-in expired", ErrSignedOut)
	case st.SignIn.Instructor != "" && !st.Instructor:
		return nil, fmt.Errorf("%w: the instructor was removed", ErrSignedOut)
	case st.ClassID != "" && !st.Member:
		return nil, fmt.Errorf("%w: the membership ended", ErrSignedOut)
	case st.ClassID != "" && st.ClassClosed:
		return nil, fmt.Errorf("%w: the class is closed", ErrSignedOut)
	}
	return &SignIn{Learner: st.Learner, Instructor: st.SignIn.Instructor, Admin: st.Admin, Expires: st.Expires}, nil
}

// SignOut withdraws sign-in id. Signing out twice is no error.
func (s *Service) SignOut(ctx context.Context, id string) error {
	if id == "" || len(id) > 128 {
		return nil
	}
	return s.o.Store.DeleteSignIn(ctx, hashSignIn(id))
}

// newSecret returns 256 random bits, URL-safe encoded.
func newSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand does not fail on supported platforms.
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashSignIn is how a sign-in's secret is kept: a random 256-bit secret
// needs no slow hash, and the store can find the row by it. A copy of the
// store therefore holds nothing a cookie could carry.
func hashSignIn(secret string) string {
	sum := sha256.Sum256([]byte("oplab sign-in\x00" + secret))
	return hex.EncodeToString(sum[:])
}
