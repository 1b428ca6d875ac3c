package server

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// fakeSignIns is SignIns in memory: the instructors ada, bob and root (an
// admin), and every sign-in made. A sign-in holds until it is signed out,
// its instructor removed, or its learner's class closed; whether an
// instructor is an admin is read on every request.
type fakeSignIns struct {
	// classClosed is whether learner's class is closed: the learning's
	// and the classroom's answer (newFakeApp).
	classClosed func(learner string) bool

	mu sync.Mutex
	// signIns by their secret; removed instructors; admin flags changed
	// since fakePasswords; wrong passwords per client; the device each
	// instructor sign-in was sent with.
	signIns map[string]SignIn
	removed map[string]bool
	admin   map[string]bool
	wrong   map[string]int
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

func newFakeSignIns(classClosed func(learner string) bool) *fakeSignIns {
	return &fakeSignIns{classClosed: classClosed, signIns: map[string]SignIn{}, removed: map[string]bool{},
		admin: map[string]bool{}, wrong: map[string]int{}}
}

// newSignInLocked records si (f.mu held) and returns it with its secret.
func (f *fakeSignIns) newSignInLocked(si SignIn) *SignIn {
	si.ID = fmt.Sprintf("signin-%d-%s", len(f.signIns)+1, randomToken(8))
	si.Expires = time.Now().Add(time.Hour)
	f.signIns[si.ID] = si
	return &si
}

// adminLocked is whether instructor name is an admin now.
func (f *fakeSignIns) adminLocked(name string) bool {
	if a, ok := f.admin[name]; ok {
		return a
	}
	return fakePasswords[name].admin
}

func (f *fakeSignIns) SignInLearner(_ context.Context, learner string) (*SignIn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.newSignInLocked(SignIn{Learner: learner}), nil
}

func (f *fakeSignIns) SignInInstructor(_ context.Context, cr Credentials) (*SignIn, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.devices = append(f.devices, cr.Device)
	if f.wrong[cr.Client] >= fakeWrongCodes {
		return nil, fakeTooMany()
	}
	p, ok := fakePasswords[cr.Name]
	if !ok || p.password != cr.Password || f.removed[cr.Name] {
		f.wrong[cr.Client]++
		return nil, fmt.Errorf("instructor: %w", ErrBadCredentials)
	}
	return f.newSignInLocked(SignIn{Instructor: cr.Name, Admin: f.adminLocked(cr.Name)}), nil
}

func (f *fakeSignIns) SignedIn(_ context.Context, id string) (*SignIn, error) {
	f.mu.Lock()
	si, ok := f.signIns[id]
	removed, admin := f.removed[si.Instructor], f.adminLocked(si.Instructor)
	f.mu.Unlock()
	switch {
	case !ok:
		return nil, fmt.Errorf("sign-in: %w", ErrSignedOut)
	case si.Instructor != "" && removed:
		return nil, fmt.Errorf("instructor %s removed: %w", si.Instructor, ErrSignedOut)
	case si.Learner != "" && f.classClosed(si.Learner):
		return nil, fmt.Errorf("the class of %s is closed: %w", si.Learner, ErrSignedOut)
	}
	si.ID = ""
	if si.Instructor != "" {
		si.Admin = admin
	}
	return &si, nil
}

func (f *fakeSignIns) SignOut(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.signIns, id)
	return nil
}

// removeInstructor and setAdmin change an instructor as an admin would.
func (f *fakeSignIns) removeInstructor(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed[name] = true
}

func (f *fakeSignIns) setAdmin(name string, admin bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.admin[name] = admin
}

// forgetWrong forgets the wrong passwords sent.
func (f *fakeSignIns) forgetWrong() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.wrong)
}

// devicesSent returns the device each instructor sign-in was sent with.
func (f *fakeSignIns) devicesSent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.devices)
}
