package server

import (
	"context"
	"fmt"
	"time"
)

// fakeSignIn is a sign-in the fake recorded; class is the learner's
// class when they signed in.
type fakeSignIn struct {
	SignIn
	class string
}

// newSignInLocked records si (f.mu held) and returns it with its secret.
func (f *fakeApp) newSignInLocked(si SignIn, class string) *SignIn {
	r := f.roomLocked()
	si.ID = fmt.Sprintf("signin-%d-%s", len(r.signIns)+1, randomToken(8))
	si.Expires = time.Now().Add(time.Hour)
	r.signIns[si.ID] = &fakeSignIn{SignIn: si, class: class}
	out := si
	return &out
}

// adminLocked is whether instructor name is an admin now.
func (f *fakeApp) adminLocked(name string) bool {
	if a, ok := f.roomLocked().admin[name]; ok {
		return a
	}
	return fakePasswords[name].admin
}

func (f *fakeApp) SignInLearner(_ context.Context, learner string) (*SignIn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	class := ""
	if m := f.members[learner]; m != nil {
		class = m.class.name
	}
	return f.newSignInLocked(SignIn{Learner: learner}, class), nil
}

// SignedIn holds the fake's rules: a sign-out forgets the record; a
// member's sign-in ends with their class (closed at join or by its
// instructor); an instructor's with their removal; admin is read now.
func (f *fakeApp) SignedIn(_ context.Context, id string) (*SignIn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.roomLocked()
	si, ok := r.signIns[id]
	switch {
	case !ok:
		return nil, fmt.Errorf("sign-in: %w", ErrSignedOut)
	case si.Instructor != "" && r.removed[si.Instructor]:
		return nil, fmt.Errorf("instructor %s removed: %w", si.Instructor, ErrSignedOut)
	case si.class != "" && (r.closed[si.class] || f.members[si.Learner].class.closed):
		return nil, fmt.Errorf("class %s closed: %w", si.class, ErrSignedOut)
	}
	out := si.SignIn
	out.ID = ""
	if out.Instructor != "" {
		out.Admin = f.adminLocked(out.Instructor)
	}
	return &out, nil
}

func (f *fakeApp) SignOut(_ context.Context, id string) error {
	f.record("sign out")
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.roomLocked().signIns, id)
	return nil
}

// removeInstructor and setAdmin change an instructor as an admin would.
func (f *fakeApp) removeInstructor(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.roomLocked().removed[name] = true
}

func (f *fakeApp) setAdmin(name string, admin bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.roomLocked().admin[name] = admin
}

// devicesSent returns the device each instructor sign-in was sent with.
func (f *fakeApp) devicesSent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.roomLocked().devices...)
}
