package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"
)

// ErrLocked is returned by Lock without waiting when another holder has
// the lock.
var ErrLocked = errors.New("locked by another server")

// SharedLocks reports whether Lock works across servers: on PostgreSQL,
// where several servers share the store. On SQLite the store has one
// machine, and its callers lock files there.
func (s *DB) SharedLocks() bool { return s.path == "" }

// lockPoll is how often a held lock is tried again.
const lockPoll = 100 * time.Millisecond

// Lock takes the lock named key, shared by every server on the store,
// waiting for it when wait is set (until ctx ends); without wait a held
// lock is ErrLocked. It is a PostgreSQL session-level advisory lock held on
// a connection of its own, so it goes when its holder dies as a file lock
// does. release gives it back. On SQLite Lock is an error: see SharedLocks.
func (s *DB) Lock(ctx context.Context, key string, wait bool) (release func(), err error) {
	if !s.SharedLocks() {
		return nil, errors.New("store: shared locks need PostgreSQL")
	}
	c, err := s.sql.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", key, err)
	}
	for {
		var got bool
		if err := c.QueryRowContext(ctx, "SELECT pg_try_advisory_lock(hashtextextended($1, 0))", key).Scan(&got); err != nil {
			c.Close()
			return nil, fmt.Errorf("lock %s: %w", key, err)
		}
		if got {
			return func() {
				// Unlock on the connection that holds it; closing the
				// connection would release it as well, but returns it to the
				// pool still held.
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if _, err := c.ExecContext(ctx, "SELECT pg_advisory_unlock(hashtextextended($1, 0))", key); err != nil {
					// The connection is unusable: drop it, and the lock with it.
					_ = c.Raw(func(any) error { return driver.ErrBadConn })
				}
				c.Close()
			}, nil
		}
		if !wait {
			c.Close()
			return nil, ErrLocked
		}
		select {
		case <-ctx.Done():
			c.Close()
			return nil, fmt.Errorf("lock %s: %w", key, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}
