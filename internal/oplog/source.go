package oplog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// Source is an operator's log wherever it is: the files of a host process,
// a pod's log read through the API server, or the copy kept when its
// cluster was deleted. The page's stream, `oplab logs`, the debrief and the
// copy kept at deletion all read a log through one.
type Source interface {
	// Lines calls emit with every whole line of the log, oldest first.
	// Without follow it returns at the log's end; with follow it goes on
	// with what is written next, across restarts of the operator, until
	// ctx ends (then it returns nil) or emit or a read fails.
	Lines(ctx context.Context, follow bool, emit func(Line) error) error
}

// Files is a log kept in files in the CRI format, oldest first (a host
// process's previous run and current run, or one recorded copy). Only the
// last may still grow: a follow tails it across restarts.
type Files []string

// Lines reads the files and, with follow, tails the last one. An earlier
// file that does not exist (no previous run) is read as empty; without
// follow, a missing last file is an error wrapping os.ErrNotExist (with
// follow it is waited for).
func (f Files) Lines(ctx context.Context, follow bool, emit func(Line) error) error {
	if len(f) == 0 {
		return nil
	}
	if follow {
		fl := &Follower{Path: f[len(f)-1]}
		for _, p := range f[:len(f)-1] {
			if err := ReadFile(p, emit); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return fl.Run(ctx, emit)
	}
	for i, p := range f {
		err := ReadFile(p, emit)
		switch {
		case errors.Is(err, os.ErrNotExist) && i == len(f)-1:
			// The operator writes its current log from its start.
			return fmt.Errorf("%w (is the operator installed?)", err)
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return err
		}
	}
	return nil
}

// Source returns the operator's log files at l.
func (l Location) Source() Files { return Files(l.Files()) }

// FormatCRI writes l as one full record of a CRI log file, with its
// newline; a line without a time (not from a CRI record) is written as it
// is, as Read keeps such a line.
func FormatCRI(l Line) []byte {
	if l.Time.IsZero() {
		return []byte(l.Text + "\n")
	}
	stream := l.Stream
	if stream == "" {
		stream = "stdout"
	}
	return []byte(l.Time.UTC().Format(time.RFC3339Nano) + " " + stream + " F " + l.Text + "\n")
}

// FollowJSON follows src and emits each line parsed as an Entry, in JSON,
// with its Cursor: the shape of a stream.Upstream, so that a hub can fan a
// log out to every viewer.
func FollowJSON(src Source) func(ctx context.Context, emit func(data []byte, cursor string)) error {
	return func(ctx context.Context, emit func(data []byte, cursor string)) error {
		return src.Lines(ctx, true, func(l Line) error {
			b, err := json.Marshal(ParseEntry(l))
			if err != nil {
				return fmt.Errorf("encode operator log line: %w", err)
			}
			emit(b, Cursor(l))
			return nil
		})
	}
}

// cursorLayout writes a line's time at a fixed width, so that cursors
// sort as their times do.
const cursorLayout = "2006-01-02T15:04:05.000000000Z"

// Cursor is a line's place in its log, the same for every reader: its
// time in UTC at a fixed width, "" for a line without one. A log's lines
// have growing times (a pod's log is read on from after its last line's
// time), so a reader that comes back to another server's stream of the
// same log resumes after the last cursor it saw.
func Cursor(l Line) string {
	if l.Time.IsZero() {
		return ""
	}
	return l.Time.UTC().Format(cursorLayout)
}
