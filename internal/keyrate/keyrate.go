// Package keyrate bounds the rate of requests per key (a learner, a
// session) with a token bucket each, keeping a bounded number of buckets:
// one over the bound forgets those that are full again, whose keys sent
// nothing for a while.
package keyrate

import (
	"sync"

	"golang.org/x/time/rate"
)

// Limiter holds a bucket per key. Its zero value is not usable: use New.
type Limiter struct {
	perSecond float64
	burst     int
	maxKeys   int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// New returns a Limiter that lets each key send perSecond requests a
// second, burst at once, and keeps maxKeys buckets before it forgets the
// full ones.
func New(perSecond float64, burst, maxKeys int) *Limiter {
	return &Limiter{perSecond: perSecond, burst: burst, maxKeys: maxKeys, buckets: map[string]*rate.Limiter{}}
}

// Allow takes one request of key's rate, and says whether there was one.
func (l *Limiter) Allow(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.maxKeys {
			for k, x := range l.buckets {
				if x.Tokens() >= float64(l.burst) {
					delete(l.buckets, k)
				}
			}
		}
		b = l.bucket()
		l.buckets[key] = b
	}
	return b.Allow()
}

// bucket is a new key's bucket, full.
func (l *Limiter) bucket() *rate.Limiter { return rate.NewLimiter(rate.Limit(l.perSecond), l.burst) }

// PerSecond is the rate of each key.
func (l *Limiter) PerSecond() float64 { return l.perSecond }
