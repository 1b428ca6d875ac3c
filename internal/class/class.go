package class

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"time"

	"oplab.dev/oplab/internal/store"
)

// Store is what the service needs of persistence (store.DB).
type Store interface {
	CreateInstructor(ctx context.Context, in *store.Instructor) error
	Instructor(ctx context.Context, name string) (store.Instructor, error)
	Instructors(ctx context.Context) ([]store.Instructor, error)
	DeleteInstructor(ctx context.Context, name string) error

	CreateSignIn(ctx context.Context, si *store.SignIn, keep int) error
	SignInState(ctx context.Context, id string) (store.SignInState, error)
	DeleteSignIn(ctx context.Context, id string) error
	DeleteClassSignIns(ctx context.Context, classID string) (int, error)

	CreateClass(ctx context.Context, c *store.Class) error
	UpdateClass(ctx context.Context, c *store.Class) error
	Class(ctx context.Context, id string) (store.Class, error)
	ClassByName(ctx context.Context, name string) (store.Class, error)
	ClassByCode(ctx context.Context, code string) (store.Class, error)
	Classes(ctx context.Context, owner string) ([]store.Class, error)
	CountMembers(ctx context.Context) (map[string]int, error)

	AddMember(ctx context.Context, c *store.Class, m *store.Member) error
	Member(ctx context.Context, id string) (store.Member, error)
	MemberByRejoin(ctx context.Context, hash string) (store.Member, error)
	Members(ctx context.Context, classID string) ([]store.Member, error)

	LinkSession(ctx context.Context, sessionID, classID string) error
	ClassSessions(ctx context.Context, classID string) ([]store.Session, error)
	Results(ctx context.Context, sessionID string) ([]store.Result, error)
	EventsOfKind(ctx context.Context, sessionID string, kinds ...string) ([]store.Event, error)
}

var _ Store = (*store.DB)(nil)

// Errors a caller can test for with errors.Is. Their messages are meant to
// be shown: they say why, not how the store failed.
var (
	ErrNotFound = errors.New("not found")
	// ErrForbidden: the actor may not manage that class.
	ErrForbidden = errors.New("not allowed")
	// ErrInvalid: the input breaks a rule (the error says which).
	ErrInvalid = errors.New("invalid")
	// ErrChanged: the class changed since the caller read it.
	ErrChanged = errors.New("changed meanwhile")
	// ErrExists: the name is taken.
	ErrExists = errors.New("already exists")
	// ErrBadCredentials: the instructor's name or password is wrong.
	ErrBadCredentials = errors.New("wrong name or password")
	// ErrBadCode: no class has that join code, or no learner that rejoin
	// code.
	ErrBadCode = errors.New("unknown code")
	// ErrTooManyAttempts: the client sent too many wrong codes or
	// passwords, or too many sign-ins are being checked at once; the
	// error (a *WaitError) says when to try again.
	ErrTooManyAttempts = errors.New("too many attempts")
	// ErrSignedOut: the sign-in was withdrawn (signed out; its class
	// closed or its membership ended; its instructor removed) or expired.
	ErrSignedOut = errors.New("signed out")
	// The class admits nobody now.
	ErrClosed  = errors.New("the class is closed")
	ErrNotOpen = errors.New("the class is not open yet")
	ErrEnded   = errors.New("the class has ended")
	ErrFull    = errors.New("the class is full")
	// ErrNotInClass: the lab is not one of the class's labs.
	ErrNotInClass = errors.New("lab is not part of the class")
)

// Options configure a Service.
type Options struct {
	// Store keeps instructors, classes and members; required.
	Store Store
	// Labs holds <id>/lab.yaml: class labs are checked against it, and the
	// export lists every exercise of each lab. Required.
	Labs fs.FS
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// FailureBurst and FailureEvery limit wrong codes per client, and
	// wrong passwords per client and per instructor name
	// (DefaultFailureBurst and DefaultFailureEvery when zero).
	FailureBurst int
	FailureEvery time.Duration
	// HashSlots bounds the password hashes that run at once, each
	// holding 64 MiB (one per two cores, at most 4, when zero);
	// HashQueue is how many more may wait for one (8 per slot when
	// zero), and HashWait how long (DefaultHashWait when zero). Beyond
	// them an attempt is refused at once, with a wait.
	HashSlots int
	HashQueue int
	HashWait  time.Duration
	// SignInTTL is how long a sign-in lasts (DefaultSignInTTL when
	// zero).
	SignInTTL time.Duration
	// Logger receives what happens (never a code or a password);
	// discarded when nil.
	Logger *slog.Logger
}

// Service runs instructors, classes and joins. It is safe for concurrent
// use.
type Service struct {
	o     Options
	log   *slog.Logger
	now   func() time.Time
	fails *limiter
	// badPasswords, badNames and devices count instructor sign-in
	// attempts per client, per name, and per name from a trusted
	// browser (see Attempt); gate bounds the hashes that run at once.
	badPasswords *limiter
	badNames     *limiter
	devices      *limiter
	gate         *hashGate
	// check is checkPassword; tests of the gate replace it.
	check func(encoded, password string) (bool, error)
}

// New returns a Service.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Labs == nil {
		return nil, errors.New("new class service: a store and labs are required")
	}
	if o.FailureBurst <= 0 {
		o.FailureBurst = DefaultFailureBurst
	}
	if o.FailureEvery <= 0 {
		o.FailureEvery = DefaultFailureEvery
	}
	if o.HashSlots <= 0 {
		o.HashSlots = defaultHashSlots()
	}
	if o.HashQueue <= 0 {
		o.HashQueue = hashQueuePerSlot * o.HashSlots
	}
	if o.HashWait <= 0 {
		o.HashWait = DefaultHashWait
	}
	if o.SignInTTL <= 0 {
		o.SignInTTL = DefaultSignInTTL
	}
	s := &Service{o: o, log: o.Logger, now: o.Now, check: checkPassword,
		fails:        newLimiter(o.FailureBurst, o.FailureEvery, maxClients),
		badPasswords: newLimiter(o.FailureBurst, o.FailureEvery, maxPasswordKeys),
		badNames:     newLimiter(o.FailureBurst, o.FailureEvery, maxPasswordKeys),
		devices:      newLimiter(o.FailureBurst, o.FailureEvery, maxPasswordKeys),
		gate:         newHashGate(o.HashSlots, o.HashQueue, o.HashWait)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Actor is who manages classes: an instructor, or an admin (who manages
// every class). The CLI acts as an admin: whoever can open the data
// directory can read the store anyway.
type Actor struct {
	Name  string
	Admin bool
}

// LocalAdmin is the actor of the command line on the server's machine.
func LocalAdmin() Actor { return Actor{Admin: true} }

// may reports whether a manages class c.
func (a Actor) may(c store.Class) bool { return a.Admin || (a.Name != "" && a.Name == c.Owner) }
