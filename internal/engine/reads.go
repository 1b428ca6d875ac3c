package engine

import (
	"context"
	"sync"
)

// A round is the n-th evaluation of every check of one Check. The checks
// run side by side, polled at one interval, and most of them read the same
// few things (the PostgresCluster, its pods, the -rw Service's endpoints,
// the events): in a round each of those is read once, by the first check
// to need it, and every check judges that one reading. A check's next
// evaluation is the next round, a reading made after its last one, so a
// check that must pass several times in a row still passes on as many
// readings. This is for a class breaking its clusters at once, when every
// learner's API server is short of CPU and each request of a Check waits.
type round struct {
	mu    sync.Mutex
	reads map[string]*sharedRead
}

// sharedRead is one reading of a round: the first caller makes it, the
// others wait for it.
type sharedRead struct {
	once sync.Once
	v    any
	err  error
}

// rounds are the rounds of one Check, made as the first check reaches each.
type rounds struct {
	mu   sync.Mutex
	list []*round
}

// nth returns round n, counted from 1.
func (rs *rounds) nth(n int) *round {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for len(rs.list) < n {
		rs.list = append(rs.list, &round{})
	}
	return rs.list[n-1]
}

type roundKey struct{}

// withRound returns ctx carrying r.
func withRound(ctx context.Context, r *round) context.Context {
	return context.WithValue(ctx, roundKey{}, r)
}

// shared returns what read returns, read once per round for key when ctx
// carries a round, and each caller gets its own copy (clone), so no check
// sees another's changes. Without a round it just reads.
func shared[T any](ctx context.Context, key string, read func() (T, error), clone func(T) T) (T, error) {
	r, _ := ctx.Value(roundKey{}).(*round)
	if r == nil {
		return read()
	}
	r.mu.Lock()
	if r.reads == nil {
		r.reads = map[string]*sharedRead{}
	}
	s, ok := r.reads[key]
	if !ok {
		s = &sharedRead{}
		r.reads[key] = s
	}
	r.mu.Unlock()
	s.once.Do(func() { s.v, s.err = read() })
	if s.err != nil {
		var zero T
		return zero, s.err
	}
	return clone(s.v.(T)), nil
}
