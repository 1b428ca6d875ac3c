package console

import (
	"errors"
	"fmt"
	"sync"
)

// Defaults of Limits.
const (
	DefaultMaxCommands = 4
	DefaultMaxFollows  = 2
)

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
}

// limiter counts the commands running per owner.
type limiter struct {
	max Limits

	mu      sync.Mutex
	running map[string]*counts // only owners with a command running
}

type counts struct{ commands, follows int }

func newLimiter(max Limits) *limiter {
	max.setDefaults()
	return &limiter{max: max, running: map[string]*counts{}}
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
