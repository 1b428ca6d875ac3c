package class

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/store"
)

// Spec describes a new class.
type Spec struct {
	Name string
	// Labs are lab ids, run in this order.
	Labs []string
	// Capacity caps the learners; zero means no cap.
	Capacity int
	// Opens and Closes bound when learners may join; zero means no bound.
	Opens, Closes time.Time
	// TimeLimit caps each session; zero means none.
	TimeLimit time.Duration
	// Warm is how many sessions of each of the class's labs to keep
	// started ahead while the class is open, so a member's start takes one
	// at once; none when empty.
	Warm map[string]int
	// Owner is the instructor who runs the class: the actor when empty,
	// or, for an admin who is no instructor (the command line), the only
	// instructor there is. Only an admin may name another instructor.
	Owner string
}

// Create makes a class with a fresh join code.
func (s *Service) Create(ctx context.Context, a Actor, sp Spec) (*Class, error) {
	if sp.Owner == "" {
		sp.Owner = a.Name
	}
	if sp.Owner == "" && a.Admin {
		ins, err := s.o.Store.Instructors(ctx)
		if err != nil {
			return nil, err
		}
		switch len(ins) {
		case 0:
			return nil, fmt.Errorf("%w class %q: a class needs an instructor: add one first (oplab instructor add NAME)", ErrInvalid, sp.Name)
		case 1:
			sp.Owner = ins[0].Name
		}
	}
	if err := s.checkSpec(ctx, a, sp); err != nil {
		return nil, err
	}
	c := &store.Class{
		ID: newID("class-"), Name: sp.Name, Labs: sp.Labs, Capacity: sp.Capacity, Opens: sp.Opens.UTC(), Closes: sp.Closes.UTC(),
		TimeLimit: sp.TimeLimit, Owner: sp.Owner, Warm: warmOf(sp.Warm),
	}
	// A fresh code colliding with another class's is unlikely (2^-48),
	// but costs only a retry.
	for try := 0; ; try++ {
		c.JoinCode = newCode(joinCodeLen)
		err := s.o.Store.CreateClass(ctx, c)
		if err == nil {
			break
		}
		if errors.Is(err, store.ErrExists) && try < 3 && !s.nameTaken(ctx, sp.Name) {
			continue
		}
		return nil, s.storeErr(err, sp.Name)
	}
	s.log.Info("class created", "class", c.Name, "owner", c.Owner, "labs", c.Labs)
	return classView(*c, 0, s.now()), nil
}

func (s *Service) nameTaken(ctx context.Context, name string) bool {
	_, err := s.o.Store.ClassByName(ctx, name)
	return err == nil
}

// checkSpec checks a class's fields and that a may give it that owner.
func (s *Service) checkSpec(ctx context.Context, a Actor, sp Spec) error {
	if err := checkName("class", sp.Name); err != nil {
		return err
	}
	if sp.Owner == "" {
		return fmt.Errorf("%w class %q: name its owner, one of the instructors (oplab instructor list)", ErrInvalid, sp.Name)
	}
	if !a.Admin && sp.Owner != a.Name {
		return fmt.Errorf("class %q: only an admin gives a class to another instructor: %w", sp.Name, ErrForbidden)
	}
	if _, err := s.o.Store.Instructor(ctx, sp.Owner); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w class %q: no instructor %q (add one with oplab instructor add)", ErrInvalid, sp.Name, sp.Owner)
		}
		return err
	}
	if err := s.checkLabs(sp.Labs); err != nil {
		return fmt.Errorf("class %q: %w", sp.Name, err)
	}
	switch {
	case sp.Capacity < 0:
		return fmt.Errorf("%w class %q: capacity %d is negative (0 means no cap)", ErrInvalid, sp.Name, sp.Capacity)
	case sp.TimeLimit < 0:
		return fmt.Errorf("%w class %q: time limit %s is negative (0 means none)", ErrInvalid, sp.Name, sp.TimeLimit)
	case !sp.Opens.IsZero() && !sp.Closes.IsZero() && !sp.Closes.After(sp.Opens):
		return fmt.Errorf("%w class %q: it closes (%s) before it opens (%s)", ErrInvalid, sp.Name,
			sp.Closes.Format(time.RFC3339), sp.Opens.Format(time.RFC3339))
	}
	return checkWarm(sp)
}

// MaxWarm caps a class's warm sessions of one lab: each is a live
// cluster, so more than a classroom's worth is a typo.
const MaxWarm = 100

// checkWarm checks that warm sessions are asked only of the class's labs,
// and no more of one lab than the class has room for learners.
func checkWarm(sp Spec) error {
	for _, id := range slices.Sorted(maps.Keys(sp.Warm)) {
		n := sp.Warm[id]
		limit := MaxWarm
		if sp.Capacity > 0 {
			limit = min(limit, sp.Capacity)
		}
		switch {
		case !slices.Contains(sp.Labs, id):
			return fmt.Errorf("%w class %q: warm sessions of lab %q, which the class does not run (%s)", ErrInvalid, sp.Name, id, strings.Join(sp.Labs, ", "))
		case n < 0 || n > limit:
			return fmt.Errorf("%w class %q: %d warm sessions of lab %s: between 0 and %d", ErrInvalid, sp.Name, n, id, limit)
		}
	}
	return nil
}

// warmOf is w without its zero entries; nil when none is left.
func warmOf(w map[string]int) map[string]int {
	out := map[string]int{}
	for id, n := range w {
		if n > 0 {
			out[id] = n
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// checkLabs checks that labs is a non-empty list of known labs without
// repeats.
func (s *Service) checkLabs(labs []string) error {
	if len(labs) == 0 {
		return fmt.Errorf("%w: a class runs at least one lab", ErrInvalid)
	}
	known, err := lab.IDs(s.o.Labs)
	if err != nil {
		return err
	}
	for i, id := range labs {
		if !slices.Contains(known, id) {
			return fmt.Errorf("%w: unknown lab %q (labs: %v)", ErrInvalid, id, known)
		}
		if slices.Contains(labs[:i], id) {
			return fmt.Errorf("%w: lab %q is listed twice", ErrInvalid, id)
		}
	}
	return nil
}

// Close closes a class: it admits nobody from now on, learners who joined
// included, and signs its learners out (for good: reopening the class
// lets them rejoin, not back in on their old cookies). Closing a closed
// class does nothing.
func (s *Service) Close(ctx context.Context, a Actor, name string) (*Class, error) {
	c, err := s.managed(ctx, a, name)
	if err != nil {
		return nil, err
	}
	if !c.Closed {
		c.Closed = true
		if err := s.o.Store.UpdateClass(ctx, &c); err != nil {
			return nil, s.storeErr(err, name)
		}
		// A sign-in made as the class closed is refused all the same:
		// SignedIn reads whether the class is closed.
		n, err := s.o.Store.DeleteClassSignIns(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		s.log.Info("class closed", "class", c.Name, "by", a.Name, "signedOut", n)
	}
	return s.view(ctx, c)
}

// Get returns a class a manages.
func (s *Service) Get(ctx context.Context, a Actor, name string) (*Class, error) {
	c, err := s.managed(ctx, a, name)
	if err != nil {
		return nil, err
	}
	return s.view(ctx, c)
}

// List returns the classes a manages (every class for an admin), newest
// first.
func (s *Service) List(ctx context.Context, a Actor) ([]Class, error) {
	owner := a.Name
	if a.Admin {
		owner = ""
	} else if owner == "" {
		return nil, fmt.Errorf("list classes: no instructor: %w", ErrForbidden)
	}
	cs, err := s.o.Store.Classes(ctx, owner)
	if err != nil {
		return nil, err
	}
	counts, err := s.o.Store.CountMembers(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := make([]Class, 0, len(cs))
	for _, c := range cs {
		out = append(out, *classView(c, counts[c.ID], now))
	}
	return out, nil
}

// Members lists the learners of a class a manages, in the order they
// joined.
func (s *Service) Members(ctx context.Context, a Actor, name string) ([]Member, error) {
	c, err := s.managed(ctx, a, name)
	if err != nil {
		return nil, err
	}
	ms, err := s.o.Store.Members(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	out := make([]Member, 0, len(ms))
	for _, m := range ms {
		out = append(out, Member{Learner: m.ID, Name: m.Name, Joined: m.Joined})
	}
	return out, nil
}

// managed reads a class by name and checks that a manages it.
func (s *Service) managed(ctx context.Context, a Actor, name string) (store.Class, error) {
	c, err := s.o.Store.ClassByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return c, fmt.Errorf("class %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return c, err
	}
	if !a.may(c) {
		return c, fmt.Errorf("class %q is run by another instructor: %w", name, ErrForbidden)
	}
	return c, nil
}

func (s *Service) view(ctx context.Context, c store.Class) (*Class, error) {
	ms, err := s.o.Store.Members(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	return classView(c, len(ms), s.now()), nil
}

// storeErr turns the store's errors about class name into the package's.
func (s *Service) storeErr(err error, name string) error {
	switch {
	case errors.Is(err, store.ErrExists):
		return fmt.Errorf("class %q: %w", name, ErrExists)
	case errors.Is(err, store.ErrConflict):
		return fmt.Errorf("class %q %w (read it again and retry): %w", name, ErrChanged, err)
	}
	return err
}

// ParseWarm reads a form's warm sessions: lab id → the number as text
// (empty is 0). The error names the lab; it wraps ErrInvalid.
func ParseWarm(fields map[string]string) (map[string]int, error) {
	out := make(map[string]int, len(fields))
	for _, id := range slices.Sorted(maps.Keys(fields)) {
		v := strings.TrimSpace(fields[id])
		if v == "" {
			out[id] = 0
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w warm sessions of %s: %q is not a whole number of 0 or more", ErrInvalid, id, v)
		}
		out[id] = n
	}
	return out, nil
}
