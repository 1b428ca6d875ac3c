package class

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults for the limit on failed attempts per client.
const (
	// DefaultFailureBurst is how many wrong codes a client may send in a
	// row. A class often sits behind one address (a school's NAT), so it
	// leaves room for a roomful of typos.
	DefaultFailureBurst = 10
	// DefaultFailureEvery is how often a client earns one more attempt.
	DefaultFailureEvery = 6 * time.Second
	// maxClients bounds the memory the limiter holds; beyond it, clients
	// whose allowance is full again are forgotten first.
	maxClients = 100_000
)

// limiter counts failed attempts per client (the caller's address as the
// front end sees it) with a token bucket each: a failure takes a token,
// and a client without one is refused until a token comes back. Successes
// cost nothing, so a learner who types the right code is never slowed.
type limiter struct {
	mu      sync.Mutex
	every   time.Duration
	burst   int
	clients map[string]*rate.Limiter
}

func newLimiter(burst int, every time.Duration) *limiter {
	return &limiter{every: every, burst: burst, clients: map[string]*rate.Limiter{}}
}

// wait returns how long client must wait before its next attempt; zero
// when it may try now.
func (l *limiter) wait(client string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.clients[client]
	if !ok {
		return 0
	}
	if t := b.TokensAt(now); t < 1 {
		// Whole seconds, rounded up: what a person is told to wait.
		d := time.Duration((1 - t) * float64(l.every))
		return (d + time.Second - 1).Truncate(time.Second)
	}
	return 0
}

// fail records a failed attempt by client.
func (l *limiter) fail(client string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.clients[client]
	if !ok {
		if len(l.clients) >= maxClients {
			l.prune(now)
		}
		for k := range l.clients {
			if len(l.clients) < maxClients {
				break
			}
			delete(l.clients, k)
		}
		b = rate.NewLimiter(rate.Every(l.every), l.burst)
		l.clients[client] = b
	}
	b.AllowN(now, 1)
}

// prune forgets clients whose allowance is full again: they are no
// different from a client never seen.
func (l *limiter) prune(now time.Time) {
	for k, b := range l.clients {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(l.clients, k)
		}
	}
}
