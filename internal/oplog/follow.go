package oplog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Follower tails the operator's log file: it reads what the file holds, then
// what is appended, across restarts of the operator (hostpod moves the file
// aside and starts a new one) and truncation.
//
// It is woken by inotify (fsnotify) on the log's directory, so that a line
// reaches a viewer within milliseconds rather than a poll interval later; it
// also polls, every Poll, for what inotify cannot tell (a directory made
// after the follower started, a file system without inotify).
type Follower struct {
	// Path is the log file; it may not exist yet.
	Path string
	// Previous, when set, is read whole before Path: the last run's log.
	Previous string
	// Poll is how often the file is checked without a notification;
	// DefaultPoll when zero.
	Poll time.Duration
	// Logger receives the follower's own trouble (a watch that failed);
	// discarded when nil.
	Logger *slog.Logger
}

// DefaultPoll is the Follower's poll interval: a safety net behind
// inotify, or the pace of following where inotify is unavailable.
const DefaultPoll = 250 * time.Millisecond

// Run calls emit with every whole line of the log, oldest first, until ctx
// ends (it then returns nil) or emit or a read fails.
func (f *Follower) Run(ctx context.Context, emit func(Line) error) error {
	log := f.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if f.Previous != "" {
		if err := ReadFile(f.Previous, emit); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	w := newWake(filepath.Dir(f.Path), log)
	defer w.close()
	poll := f.Poll
	if poll <= 0 {
		poll = DefaultPoll
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	t := &tail{path: f.Path, emit: emit}
	defer t.close()
	for {
		if err := t.step(); err != nil {
			return err
		}
		if !w.wait(ctx, f.Path, tick.C) {
			return nil
		}
	}
}

// wake turns fsnotify's events on a directory into wake-ups.
type wake struct {
	dir string
	log *slog.Logger
	w   *fsnotify.Watcher
	ok  bool // dir is watched
}

func newWake(dir string, log *slog.Logger) *wake {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		log.Warn("operator log: no file notifications, polling", "err", err)
		return &wake{dir: dir, log: log}
	}
	k := &wake{dir: dir, log: log, w: w}
	k.retry()
	return k
}

// retry watches the directory if it is not watched yet (it may be made
// after the follower starts).
func (k *wake) retry() {
	if k.w == nil || k.ok {
		return
	}
	if err := k.w.Add(k.dir); err == nil {
		k.ok = true
	} else if !errors.Is(err, os.ErrNotExist) {
		k.log.Warn("operator log: watch directory", "dir", k.dir, "err", err)
	}
}

// channels returns the watcher's channels; nil (never ready) without one.
func (k *wake) channels() (<-chan fsnotify.Event, <-chan error) {
	if k.w == nil {
		return nil, nil
	}
	return k.w.Events, k.w.Errors
}

// wait returns when path may have changed (true) or ctx ended (false).
func (k *wake) wait(ctx context.Context, path string, tick <-chan time.Time) bool {
	events, errs := k.channels()
	for {
		select {
		case <-ctx.Done():
			return false
		case ev := <-events:
			// The directory holds the operator's token and hostpod's own
			// log too; only the log's changes are worth a read.
			if filepath.Clean(ev.Name) == filepath.Clean(path) {
				return true
			}
		case err := <-errs:
			k.log.Warn("operator log: file notifications", "err", err)
		case <-tick:
			k.retry()
			return true
		}
	}
}

func (k *wake) close() {
	if k.w != nil {
		k.w.Close()
	}
}

// tail reads one file from where it left off.
type tail struct {
	path    string
	emit    func(Line) error
	f       *os.File
	off     int64  // bytes of f consumed, pending included
	pending []byte // the start of a line not yet ended by a newline
	j       Joiner
	buf     []byte
}

// maxPending bounds a line without a newline; hostpod's writer splits lines
// far shorter, so only a foreign file reaches it.
const maxPending = 1 << 20

// step reads what is new: the open file to its end, then a new file at the
// path if the operator restarted, or the file again if it was truncated.
func (t *tail) step() error {
	for {
		if t.f == nil {
			f, err := os.Open(t.path)
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("open operator log: %w", err)
			}
			t.f, t.off, t.pending = f, 0, t.pending[:0]
			t.j.Reset()
		}
		if err := t.drain(); err != nil {
			return err
		}
		switch t.changed() {
		case replaced:
			t.close() // read to its end above; the new file next
		case truncated:
			if _, err := t.f.Seek(0, io.SeekStart); err != nil {
				return fmt.Errorf("read operator log: %w", err)
			}
			t.off, t.pending = 0, t.pending[:0]
			t.j.Reset()
		default:
			return nil
		}
	}
}

type change int

const (
	same change = iota
	replaced
	truncated
)

func (t *tail) changed() change {
	now, err := os.Stat(t.path)
	if err != nil {
		return same // moved aside, the new one not made yet: keep the old
	}
	open, err := t.f.Stat()
	if err != nil || !os.SameFile(now, open) {
		return replaced
	}
	if now.Size() < t.off {
		return truncated
	}
	return same
}

func (t *tail) drain() error {
	if t.buf == nil {
		t.buf = make([]byte, 64*1024)
	}
	for {
		n, err := t.f.Read(t.buf)
		if n > 0 {
			t.off += int64(n)
			if err := t.lines(t.buf[:n]); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read operator log: %w", err)
		}
	}
}

func (t *tail) lines(b []byte) error {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			t.pending = append(t.pending, b...)
			if len(t.pending) >= maxPending {
				return t.line(t.pending[:maxPending])
			}
			return nil
		}
		var raw []byte
		if len(t.pending) > 0 {
			t.pending = append(t.pending, b[:i]...)
			raw = t.pending
		} else {
			raw = b[:i]
		}
		if err := t.line(raw); err != nil {
			return err
		}
		b = b[i+1:]
	}
}

func (t *tail) line(raw []byte) error {
	l, ok := t.j.Add(string(raw))
	t.pending = t.pending[:0]
	if !ok {
		return nil
	}
	return t.emit(l)
}

func (t *tail) close() {
	if t.f != nil {
		t.f.Close()
		t.f = nil
	}
}
