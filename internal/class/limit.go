package class

import (
	"net"
	"sync"
	"time"
)

// Defaults for the limit on failed attempts per client.
const (
	// DefaultFailureBurst is how many wrong codes a client may send in a
	// row. A class often sits behind one address (a school's NAT), so it
	// leaves room for a roomful of typos.
	DefaultFailureBurst = 10
	// DefaultFailureEvery is how often a client earns one more attempt.
	DefaultFailureEvery = 6 * time.Second
	// maxClients bounds the keys the codes' limiter holds, and
	// maxPasswordKeys each of the password limiters' (a key and its
	// bucket cost about 150 bytes: at most 15 MB and 1.5 MB).
	maxClients      = 100_000
	maxPasswordKeys = 10_000
)

// limiter counts attempts per key (a client's address, an instructor's
// name) with a token bucket each; a key without a token is refused until
// one comes back, and successes cost nothing. It counts in one of two
// ways:
//   - take before the attempt is evaluated, refund after a success: for
//     passwords, whose evaluation (a 64 MiB hash) is what must be
//     bounded, so attempts sent at once are counted as they arrive;
//   - wait before, charge after a failure, into debt: for codes, whose
//     lookup is cheap, so that a roomful of right codes sent at once from
//     one school's address is never refused for attempts still in
//     flight, while every wrong one sent at once is still counted and
//     paid back in time before the next is looked up.
type limiter struct {
	mu    sync.Mutex
	every time.Duration
	burst int
	max   int
	keys  map[string]*bucket
}

// bucket holds tokens as of at.
type bucket struct {
	tokens float64
	at     time.Time
}

func newLimiter(burst int, every time.Duration, max int) *limiter {
	return &limiter{every: every, burst: burst, max: max, keys: map[string]*bucket{}}
}

// level is b's tokens at now.
func (l *limiter) level(b *bucket, now time.Time) float64 {
	t := b.tokens
	if d := now.Sub(b.at); d > 0 {
		t += float64(d) / float64(l.every)
	}
	return min(t, float64(l.burst))
}

// wait returns how long key must wait before its next attempt; zero when
// it may try now.
func (l *limiter) wait(key string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.keys[key]; ok {
		return l.waitFor(l.level(b, now))
	}
	return 0
}

// waitFor is the wait until a bucket at level t holds a token, in whole
// seconds rounded up: what a person is told, and what Retry-After says.
func (l *limiter) waitFor(t float64) time.Duration {
	if t >= 1 {
		return 0
	}
	d := time.Duration((1 - t) * float64(l.every))
	return (d + time.Second - 1).Truncate(time.Second)
}

// take spends one of key's attempts. When key has none it takes nothing
// and returns how long to wait.
func (l *limiter) take(key string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketOf(key, now)
	t := l.level(b, now)
	if t < 1 {
		return l.waitFor(t)
	}
	b.tokens, b.at = t-1, now
	return 0
}

// bucketOf returns key's bucket, made full when key has none; l.mu is held.
func (l *limiter) bucketOf(key string, now time.Time) *bucket {
	b, ok := l.keys[key]
	if !ok {
		l.makeRoom(now)
		b = &bucket{tokens: float64(l.burst), at: now}
		l.keys[key] = b
	}
	return b
}

// charge counts a failed attempt by key, going into debt when key has no
// token left (attempts that passed wait together, then failed).
func (l *limiter) charge(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketOf(key, now)
	b.tokens, b.at = l.level(b, now)-1, now
}

// refund gives back an attempt take spent: a success costs nothing, nor
// does an attempt that was never evaluated.
func (l *limiter) refund(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.keys[key]; ok {
		b.tokens, b.at = min(l.level(b, now)+1, float64(l.burst)), now
	}
}

// makeRoom keeps the map under its bound: first it forgets keys whose
// allowance is full again (they are no different from a key never seen);
// if that frees less than a tenth, it forgets any keys down to nine
// tenths, so that a flood of new keys costs one scan per tenth of the
// map, not one per key. Forgetting a key gives it back its attempts:
// under such a flood it is the hashing gate, not this count, that keeps
// the server up.
func (l *limiter) makeRoom(now time.Time) {
	if len(l.keys) < l.max {
		return
	}
	l.prune(now)
	for k := range l.keys {
		if len(l.keys) <= l.max*9/10 {
			break
		}
		delete(l.keys, k)
	}
}

// prune forgets keys whose allowance is full again.
func (l *limiter) prune(now time.Time) {
	for k, b := range l.keys {
		if l.level(b, now) >= float64(l.burst) {
			delete(l.keys, k)
		}
	}
}

// clientKey is the key a client's address is counted under: the address
// itself, or for IPv6 its /64, which one subscriber usually holds whole
// (counting single IPv6 addresses would give them 2^64 allowances).
func clientKey(client string) string {
	ip := net.ParseIP(client)
	if ip == nil || ip.To4() != nil {
		return client
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
