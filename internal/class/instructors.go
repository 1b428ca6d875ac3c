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

// Verify signs an instructor in: ErrBadCredentials for an unknown name or
// a wrong password alike, taking as long for either. client is the
// caller's address as the front end sees it: wrong passwords are rate
// limited per client like wrong codes (with an allowance of their own, so
// learners' typos never lock an instructor out).
func (s *Service) Verify(ctx context.Context, client, name, password string) (*Instructor, error) {
	now := s.now()
	if d := s.badPasswords.wait(client, now); d > 0 {
		return nil, &WaitError{Wait: d}
	}
	in, ok, err := s.verify(ctx, name, password)
	if err != nil {
		return nil, err
	}
	if !ok {
		s.badPasswords.fail(client, now)
		s.log.Info("wrong instructor name or password", "client", client)
		return nil, ErrBadCredentials
	}
	return instructorView(in), nil
}

func (s *Service) verify(ctx context.Context, name, password string) (store.Instructor, bool, error) {
	in, err := s.o.Store.Instructor(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		// Spend the time a known name costs, so timing does not tell
		// which names exist.
		_, _ = checkPassword(dummyHash(), password)
		return in, false, nil
	}
	if err != nil {
		return in, false, err
	}
	ok, err := checkPassword(in.PasswordHash, password)
	if err != nil {
		return in, false, fmt.Errorf("instructor %q: %w", name, err)
	}
	return in, ok, nil
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
