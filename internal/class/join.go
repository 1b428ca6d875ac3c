package class

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/store"
)

// maxDisplayName bounds a display name, in characters.
const maxDisplayName = 40

// Joined is a learner in a class: who they are and where.
type Joined struct {
	// Learner is the learner's identity: the Learner of their sessions.
	Learner string   `json:"learner"`
	Name    string   `json:"name"`
	ClassID string   `json:"classId"`
	Class   string   `json:"class"`
	Labs    []string `json:"labs"`
	// TimeLimit caps each session of the class; zero means none.
	TimeLimit jsonconv.Duration `json:"timeLimitMs,omitempty"`
	// RejoinCode is the learner's personal code to get back in from
	// another device. Join sets it, once: it is not stored and cannot be
	// shown again.
	RejoinCode string `json:"rejoinCode,omitempty"`
}

// Join admits a learner to the class whose join code is code, under a
// display name. client is the caller's address as the front end sees it:
// wrong codes are rate limited per client.
func (s *Service) Join(ctx context.Context, client, code, displayName string) (*Joined, error) {
	name, err := cleanDisplayName(displayName)
	if err != nil {
		return nil, err
	}
	c, err := s.byCode(ctx, client, code, func(ctx context.Context, code string) (store.Class, error) {
		return s.o.Store.ClassByCode(ctx, code)
	})
	if err != nil {
		return nil, err
	}
	// The store admits within the capacity atomically; a class edited
	// between the read and the insert (closed, its capacity lowered) is
	// read again, so its new rules apply.
	for try := 0; ; try++ {
		if err := s.windowOpen(c); err != nil {
			return nil, err
		}
		rejoin := newCode(rejoinCodeLen)
		m := &store.Member{ID: newID("learner-"), Name: name, RejoinHash: hashRejoin(rejoin)}
		err := s.o.Store.AddMember(ctx, &c, m)
		switch {
		case err == nil:
			s.log.Info("learner joined", "class", c.Name, "learner", m.ID)
			j := joined(c, *m)
			j.RejoinCode = FormatCode(rejoin)
			return j, nil
		case errors.Is(err, store.ErrConflict) && try < 3:
			if c, err = s.o.Store.Class(ctx, c.ID); err != nil {
				return nil, err
			}
			continue
		case errors.Is(err, store.ErrFull):
			return nil, fmt.Errorf("class %s: %w", c.Name, ErrFull)
		case errors.Is(err, store.ErrExists):
			return nil, fmt.Errorf("%w: the name %q is taken in this class: choose another, or rejoin with your personal code", ErrExists, name)
		}
		return nil, err
	}
}

// Rejoin lets a learner back in with the personal code Join gave them.
// Wrong codes are rate limited per client as in Join.
func (s *Service) Rejoin(ctx context.Context, client, rejoinCode string) (*Joined, error) {
	var m store.Member
	c, err := s.byCode(ctx, client, rejoinCode, func(ctx context.Context, code string) (store.Class, error) {
		var err error
		if m, err = s.o.Store.MemberByRejoin(ctx, hashRejoin(code)); err != nil {
			return store.Class{}, err
		}
		return s.o.Store.Class(ctx, m.ClassID)
	})
	if err != nil {
		return nil, err
	}
	if err := s.windowOpen(c); err != nil {
		return nil, err
	}
	s.log.Info("learner rejoined", "class", c.Name, "learner", m.ID)
	return joined(c, m), nil
}

// WaitError is ErrTooManyAttempts with how long the client must wait, so
// a front end can say it in its own words (and send Retry-After).
type WaitError struct{ Wait time.Duration }

func (e *WaitError) Error() string {
	return fmt.Sprintf("%v: try again in %s", ErrTooManyAttempts, e.Wait)
}

func (e *WaitError) Unwrap() error { return ErrTooManyAttempts }

// Membership returns the class learner belongs to, as Join returned it
// but without the rejoin code; ErrNotFound when learner is in no class
// (the local learner of a single-user oplab).
func (s *Service) Membership(ctx context.Context, learner string) (*Joined, error) {
	m, err := s.o.Store.Member(ctx, learner)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("learner %q is in no class: %w", learner, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	c, err := s.o.Store.Class(ctx, m.ClassID)
	if err != nil {
		return nil, err
	}
	return joined(c, m), nil
}

// byCode finds a class by a code with find, counting a miss against
// client (per /64 for IPv6). A client with too many misses is refused
// before the lookup, so the answer does not depend on whether its code
// is right. Every miss is counted, those sent at once too: the client
// then waits until each is paid back (see limiter).
func (s *Service) byCode(ctx context.Context, client, code string, find func(context.Context, string) (store.Class, error)) (store.Class, error) {
	now := s.now()
	key := clientKey(client)
	if d := s.fails.wait(key, now); d > 0 {
		s.log.Info("code refused: too many wrong codes", "client", client)
		return store.Class{}, &WaitError{Wait: d}
	}
	code = normalizeCode(code)
	var c store.Class
	err := store.ErrNotFound
	if code != "" && len(code) <= 64 {
		c, err = find(ctx, code)
	}
	if errors.Is(err, store.ErrNotFound) {
		s.fails.charge(key, now)
		s.log.Info("wrong code", "client", client)
		return c, fmt.Errorf("%w: check the code and try again", ErrBadCode)
	}
	return c, err
}

// windowOpen checks that c is not closed and that now is inside its
// opening hours.
func (s *Service) windowOpen(c store.Class) error {
	now := s.now()
	switch {
	case c.Closed:
		return fmt.Errorf("class %s: %w", c.Name, ErrClosed)
	case !c.Opens.IsZero() && now.Before(c.Opens):
		return fmt.Errorf("class %s: %w: it opens at %s", c.Name, ErrNotOpen, c.Opens.Local().Format("2006-01-02 15:04 MST"))
	case !c.Closes.IsZero() && !now.Before(c.Closes):
		return fmt.Errorf("class %s: %w: it closed at %s", c.Name, ErrEnded, c.Closes.Local().Format("2006-01-02 15:04 MST"))
	}
	return nil
}

func joined(c store.Class, m store.Member) *Joined {
	return &Joined{Learner: m.ID, Name: m.Name, ClassID: c.ID, Class: c.Name, Labs: c.Labs, TimeLimit: jsonconv.Duration(c.TimeLimit)}
}

// cleanDisplayName trims a display name and checks it is printable and
// not too long; runs of spaces become one.
func cleanDisplayName(name string) (string, error) {
	name = strings.Join(strings.Fields(name), " ")
	switch {
	case name == "":
		return "", fmt.Errorf("%w display name: it is empty", ErrInvalid)
	case utf8.RuneCountInString(name) > maxDisplayName:
		return "", fmt.Errorf("%w display name: use at most %d characters", ErrInvalid, maxDisplayName)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }):
		return "", fmt.Errorf("%w display name: it holds characters that cannot be shown", ErrInvalid)
	}
	return name, nil
}

// Admission is what a learner's new session in their class gets.
type Admission struct {
	ClassID   string            `json:"classId"`
	TimeLimit jsonconv.Duration `json:"timeLimitMs,omitempty"`
	// Warm is how many sessions of the lab the class keeps started ahead.
	Warm int `json:"warm,omitempty"`
}

// Admit checks that learner may start a session of lab now: their class
// is open and runs that lab. The front end calls it before starting the
// session, and Link after.
func (s *Service) Admit(ctx context.Context, learner, labID string) (*Admission, error) {
	m, err := s.o.Store.Member(ctx, learner)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("learner %q: %w", learner, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	c, err := s.o.Store.Class(ctx, m.ClassID)
	if err != nil {
		return nil, err
	}
	if err := s.windowOpen(c); err != nil {
		return nil, err
	}
	if !slices.Contains(c.Labs, labID) {
		return nil, fmt.Errorf("lab %q: %w %s (its labs: %s)", labID, ErrNotInClass, c.Name, strings.Join(c.Labs, ", "))
	}
	return &Admission{ClassID: c.ID, TimeLimit: jsonconv.Duration(c.TimeLimit), Warm: c.Warm[labID]}, nil
}

// Link records that session sessionID, started by a learner Admit
// admitted, runs in their class.
func (s *Service) Link(ctx context.Context, sessionID string, a *Admission) error {
	return s.o.Store.LinkSession(ctx, sessionID, a.ClassID)
}
