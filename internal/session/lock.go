package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"oplab.dev/oplab/internal/store"
)

// lockPoll is how often a session lock held elsewhere is tried again.
const lockPoll = 100 * time.Millisecond

// lock serialises work on one session: in this process with a mutex and,
// when Options.LockDir is set, across processes (two oplab commands in two
// terminals) with a file lock. It waits until the lock is free or ctx
// ends, and returns the unlock.
func (m *Manager) lock(ctx context.Context, id string) (func(), error) {
	l := m.mutex(id)
	for !l.TryLock() {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("session %s is busy: %w", id, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
	release, err := m.flock(ctx, id, true)
	if err != nil {
		l.Unlock()
		return nil, err
	}
	return func() {
		release()
		l.Unlock()
	}, nil
}

// tryLock takes a session's lock unless it is held, here or elsewhere.
func (m *Manager) tryLock(id string) (func(), bool) {
	l := m.mutex(id)
	if !l.TryLock() {
		return nil, false
	}
	release, err := m.flock(context.Background(), id, false)
	if err != nil {
		l.Unlock()
		return nil, false
	}
	return func() {
		release()
		l.Unlock()
	}, true
}

// busy reports whether this process holds session id's lock now (a
// learner's request is at work on it). It takes nothing: the answer may
// be stale by the time it is read.
func (m *Manager) busy(id string) bool {
	l := m.mutex(id)
	if l.TryLock() {
		l.Unlock()
		return false
	}
	return true
}

func (m *Manager) mutex(id string) *sync.Mutex {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.locks[id]
	if !ok {
		l = &sync.Mutex{}
		m.locks[id] = l
	}
	return l
}

// errLocked: another process holds the session's file lock.
var errLocked = errors.New("session locked by another process")

// sharedLocker is a store whose locks every server on it shares
// (store.DB on PostgreSQL).
type sharedLocker interface {
	SharedLocks() bool
	Lock(ctx context.Context, key string, wait bool) (func(), error)
}

// shared returns the store's shared locks, when it has them: servers that
// share a PostgreSQL store lock sessions there, not in files of one
// machine.
func (m *Manager) shared() (sharedLocker, bool) {
	sl, ok := m.o.Store.(sharedLocker)
	return sl, ok && sl.SharedLocks()
}

// flock takes the cross-process lock of session id — the store's shared
// lock, else a file lock in LockDir — waiting for it when wait is set, and
// returns its release; a no-op without either.
func (m *Manager) flock(ctx context.Context, id string, wait bool) (func(), error) {
	if sl, ok := m.shared(); ok {
		release, err := sl.Lock(ctx, "oplab/session/"+id, wait)
		switch {
		case errors.Is(err, store.ErrLocked):
			return nil, errLocked
		case err != nil && ctx.Err() != nil:
			return nil, fmt.Errorf("session %s is busy with another oplab server: %w", id, ctx.Err())
		case err != nil:
			return nil, fmt.Errorf("lock session %s: %w", id, err)
		}
		return release, nil
	}
	if m.o.LockDir == "" {
		return func() {}, nil
	}
	if err := os.MkdirAll(m.o.LockDir, 0o700); err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	f, err := os.OpenFile(filepath.Join(m.o.LockDir, id+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			// Who held it last, and now who holds it: for the message of a
			// command that finds the lock free and the work half-done.
			prev := make([]byte, 32)
			n, _ := f.ReadAt(prev, 0)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(prev[:n])))
			m.mu.Lock()
			m.holders[id] = pid
			m.mu.Unlock()
			_ = f.Truncate(0)
			_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			return func() { f.Close() }, nil // closing releases it
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock session %s: %w", id, err)
		}
		if !wait {
			f.Close()
			return nil, errLocked
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("session %s is busy with another oplab command: %w", id, ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

// lastHolder returns the PID of the process that held session id's file
// lock before this Manager last took it, or 0 when it is not known (always
// with the store's shared locks: the holder may have been another machine).
func (m *Manager) lastHolder(id string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.holders[id]
}

// ownerKnown reports whether holding a session's lock proves that no other
// process works on it: a lock shared by every process through LockDir,
// which the kernel releases when its holder dies, or the store's shared
// lock, which PostgreSQL releases when its holder's connection ends.
// Without either the lock covers this process only, and another process
// sharing the store (a second server) may be working on the session.
func (m *Manager) ownerKnown() bool {
	_, shared := m.shared()
	return shared || m.o.LockDir != ""
}
