package console

import (
	"errors"
	"fmt"
	"sync"

	"oplab.dev/oplab/internal/keyrate"
)

// Defaults of Limits.
const (
	DefaultMaxCommands = 4
	DefaultMaxFollows  = 2
	// A learner types a few lines a second at most; a script posting
	// refused lines as fast as the server answers would fill the store
	// with them (each one recorded, if cut to a few KiB).
	DefaultPerSecond = 5
	DefaultBurst     = 20
)

// ErrTooFast matches, with errors.Is, the refusal of a line sent faster
// than its owner's rate (Limits.PerSecond). It is also ErrRefused, and is
// not recorded: it is the flood itself.
var ErrTooFast = errors.New("console lines sent too fast")

// ErrTooMany matches, with errors.Is, the refusal of a command that its
// owner's caps do not leave room for. It is also ErrRefused.
var ErrTooMany = errors.New("too many console commands at once")

// Limits caps what one owner (a learner) runs through a Runner at once.
// The Runner is shared by every learner of a server, so each learner's
// commands are counted apart: one learner's watches never crowd out
// another's. A command over a cap is refused at once, never queued: a
// queue would hold the learner's browser request open for a command that
// may never start.
type Limits struct {
	// Commands caps the commands of one owner running at once, those that
	// follow included, and the questions Tab asks the cluster
	// (DefaultMaxCommands when zero or less).
	Commands int
	// PerSecond and Burst bound the lines one owner sends, refused ones
	// included, before anything else is done with them
	// (DefaultPerSecond and DefaultBurst when zero or less).
	PerSecond float64
	Burst     int
	// Follows caps those of them that run until stopped: get -w, logs -f,
	// rollout status, wait (DefaultMaxFollows when zero or less). A
	// follow may run for FollowTimeout, so it gets a smaller cap.
	Follows int
}

func (l *Limits) setDefaults() {
	if l.Commands <= 0 {
		l.Commands = DefaultMaxCommands
	}
	if l.Follows <= 0 {
		l.Follows = DefaultMaxFollows
	}
	l.Follows = min(l.Follows, l.Commands)
	if l.PerSecond <= 0 {
		l.PerSecond = DefaultPerSecond
	}
	if l.Burst <= 0 {
		l.Burst = DefaultBurst
	}
}

// limiter counts the commands running per owner.
type limiter struct {
	max Limits

	mu      sync.Mutex
	running map[string]*counts // only owners with a command running
	rates   *keyrate.Limiter
}

type counts struct{ commands, follows int }

func newLimiter(max Limits) *limiter {
	max.setDefaults()
	return &limiter{max: max, running: map[string]*counts{}, rates: keyrate.New(max.PerSecond, max.Burst, maxRates)}
}

// maxRates is how many owners' rates the limiter keeps before it forgets
// those whose bucket is full again (they sent nothing for a while).
const maxRates = 1024

// allow takes one line of owner's rate, or refuses it.
func (l *limiter) allow(owner string) error {
	if !l.rates.Allow(owner) {
		return &RefusedError{Msg: fmt.Sprintf("lines are coming faster than %g a second: wait a moment", l.max.PerSecond), Err: ErrTooFast}
	}
	return nil
}

// acquire takes a place for one command of owner, a follow when follow,
// and returns the function that gives it back (once, however often it is
// called). Over a cap it takes nothing and returns a refusal that says
// what is running.
func (l *limiter) acquire(owner string, follow bool) (release func(), err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.running[owner]
	if n == nil {
		n = &counts{}
	}
	switch {
	case n.commands >= l.max.Commands:
		return nil, tooMany(fmt.Sprintf("%s still running: wait for one to finish or stop it", count(n.commands, "command is", "commands are")))
	case follow && n.follows >= l.max.Follows:
		return nil, tooMany(fmt.Sprintf("%s that keep running (get -w, logs -f, rollout status, wait) %s still open: stop one before you start another",
			count(n.follows, "command", "commands"), pick(n.follows, "is", "are")))
	}
	n.commands++
	if follow {
		n.follows++
	}
	l.running[owner] = n
	var once sync.Once
	return func() { once.Do(func() { l.release(owner, follow) }) }, nil
}

func (l *limiter) release(owner string, follow bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.running[owner]
	n.commands--
	if follow {
		n.follows--
	}
	if n.commands == 0 {
		delete(l.running, owner)
	}
}

// load reports how many commands and follows owner has running.
func (l *limiter) load(owner string) (commands, follows int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := l.running[owner]; n != nil {
		return n.commands, n.follows
	}
	return 0, 0
}

func tooMany(msg string) error { return &RefusedError{Msg: msg, Err: ErrTooMany} }

func count(n int, one, many string) string { return fmt.Sprintf("%d %s", n, pick(n, one, many)) }

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
