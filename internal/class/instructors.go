package class

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"
	"unicode/utf8"

	"oplab.dev/oplab/internal/store"
)

// Instructor is an instructor as the front ends show one.
type Instructor struct {
	Name    string    `json:"name"`
	Admin   bool      `json:"admin"`
	Created time.Time `json:"created"`
}

// Actor is who the instructor acts as.
func (i *Instructor) Actor() Actor { return Actor{Name: i.Name, Admin: i.Admin} }

// namePattern is the shape of instructor and class names: they appear in
// commands and URLs.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func checkName(what, name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("%w %s name %q: use 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", ErrInvalid, what, name)
	}
	return nil
}

// AddInstructor adds an instructor with a password, kept as an argon2id
// hash.
func (s *Service) AddInstructor(ctx context.Context, name, password string, admin bool) (*Instructor, error) {
	if err := checkName("instructor", name); err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(password); n < MinPasswordLen || len(password) > maxPasswordLen {
		return nil, fmt.Errorf("%w password: use at least %d characters (and at most %d bytes)", ErrInvalid, MinPasswordLen, maxPasswordLen)
	}
	hash, err := hashPassword(password)
	if err != nil {
		return nil, err
	}
	in := &store.Instructor{Name: name, PasswordHash: hash, Admin: admin}
	if err := s.o.Store.CreateInstructor(ctx, in); err != nil {
		if errors.Is(err, store.ErrExists) {
			return nil, fmt.Errorf("instructor %q: %w", name, ErrExists)
		}
		return nil, err
	}
	s.log.Info("instructor added", "name", name, "admin", admin)
	return instructorView(*in), nil
}

// Attempt is an instructor's sign-in as a front end received it.
type Attempt struct {
	// Client is the caller's address as the front end sees it.
	Client   string
	Name     string
	Password string
	// Device is the instructor the front end's device proof (a cookie
	// only it can sign, set when a sign-in succeeds) says this browser
	// signed in as before; empty when none. An attempt on that same name
	// is counted apart from the name's and the address's other attempts
	// and served first, so a flood of guesses on a name, or from the
	// instructor's own network, does not lock its owner out.
	Device string
}

// Verify checks an instructor's name and password: ErrBadCredentials for
// an unknown name or a wrong password alike, taking as long for either.
// client is the caller's address as the front end sees it. Attempts are
// limited as Attempt and SignInInstructor say.
func (s *Service) Verify(ctx context.Context, client, name, password string) (*Instructor, error) {
	in, err := s.verifyAttempt(ctx, Attempt{Client: client, Name: name, Password: password})
	if err != nil {
		return nil, err
	}
	return instructorView(in), nil
}

// attemptKey is a limiter and the key an attempt is counted under in it.
type attemptKey struct {
	l   *limiter
	key string
}

// verifyAttempt checks at. The attempt is counted before its password is
// hashed, per client address and per name (or, from a trusted browser,
// per name among its trusted browsers): a client or name out of attempts
// is refused without hashing, and so are attempts sent at once beyond
// the allowance. A success gives the attempt back. The hash itself waits
// for the gate, which bounds the hashes (64 MiB each) that run at once.
func (s *Service) verifyAttempt(ctx context.Context, at Attempt) (store.Instructor, error) {
	now := s.now()
	trusted := at.Device != "" && at.Device == at.Name
	keys := []attemptKey{{s.badPasswords, clientKey(at.Client)}, {s.badNames, at.Name}}
	gateKey := "client\x00" + clientKey(at.Client)
	if trusted {
		keys = []attemptKey{{s.devices, at.Name}}
		gateKey = "device\x00" + at.Name
	}
	refund := func(keys []attemptKey) {
		for _, k := range keys {
			k.l.refund(k.key, now)
		}
	}
	for i, k := range keys {
		if d := k.l.take(k.key, now); d > 0 {
			refund(keys[:i])
			s.log.Info("instructor sign-in refused: too many attempts", "client", at.Client, "trusted", trusted)
			return store.Instructor{}, &WaitError{Wait: d}
		}
	}
	// A name no instructor can have, or a password no instructor can
	// have set, is wrong without hashing: nothing about which names
	// exist is told by that.
	if !namePattern.MatchString(at.Name) || at.Password == "" || len(at.Password) > maxPasswordLen {
		s.log.Info("wrong instructor name or password", "client", at.Client)
		return store.Instructor{}, ErrBadCredentials
	}
	release, err := s.gate.acquire(ctx, gateKey, trusted)
	if err != nil {
		// Not evaluated, so not counted.
		refund(keys)
		if errors.Is(err, errBusy) {
			s.log.Info("instructor sign-in refused: busy", "client", at.Client, "trusted", trusted)
			return store.Instructor{}, &WaitError{Wait: busyRetry}
		}
		return store.Instructor{}, err
	}
	in, ok, err := s.verify(ctx, at.Name, at.Password)
	release()
	switch {
	case err != nil:
		refund(keys)
		return in, err
	case !ok:
		s.log.Info("wrong instructor name or password", "client", at.Client, "trusted", trusted)
		return in, ErrBadCredentials
	}
	refund(keys)
	return in, nil
}

func (s *Service) verify(ctx context.Context, name, password string) (store.Instructor, bool, error) {
	in, err := s.o.Store.Instructor(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		// Spend the time a known name costs, so timing does not tell
		// which names exist.
		_, _ = s.check(dummyHash(), password)
		return in, false, nil
	}
	if err != nil {
		return in, false, err
	}
	ok, err := s.check(in.PasswordHash, password)
	if err != nil {
		return in, false, fmt.Errorf("instructor %q: %w", name, err)
	}
	return in, ok, nil
}

// RemoveInstructor removes an instructor, and with them every sign-in
// they have: their next request is refused. Only an admin removes one;
// an instructor who still runs classes is kept until their classes have
// another owner.
func (s *Service) RemoveInstructor(ctx context.Context, a Actor, name string) error {
	if !a.Admin {
		return fmt.Errorf("remove instructor %q: only an admin removes an instructor: %w", name, ErrForbidden)
	}
	err := s.o.Store.DeleteInstructor(ctx, name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("instructor %q: %w", name, ErrNotFound)
	case errors.Is(err, store.ErrConflict):
		return fmt.Errorf("%w instructor %q: they run classes: give each another owner first (oplab class edit CLASS --owner NAME)", ErrInvalid, name)
	case err != nil:
		return err
	}
	s.log.Info("instructor removed", "name", name, "by", a.Name)
	return nil
}

// Instructors lists the instructors by name.
func (s *Service) Instructors(ctx context.Context) ([]Instructor, error) {
	ins, err := s.o.Store.Instructors(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Instructor, 0, len(ins))
	for _, in := range ins {
		out = append(out, *instructorView(in))
	}
	return out, nil
}

func instructorView(in store.Instructor) *Instructor {
	return &Instructor{Name: in.Name, Admin: in.Admin, Created: in.Created}
}

// dummyHash is a hash of a random password, computed once.
var dummyHash = sync.OnceValue(func() string {
	h, _ := hashPassword(newCode(20))
	return h
})
