package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/oplog"
)

// MaxRecordedLog bounds the operator's log kept per session for its
// debrief: the newest bytes of it, at a line boundary. A busy operator
// writes a few hundred bytes a reconcile; this holds thousands of lines.
const MaxRecordedLog = 512 << 10

// recordedLogDir holds the operator logs kept from deleted clusters.
const recordedLogDir = "oplogs"

// recordedLog is where the operator log of session id is kept.
func (a *App) recordedLog(id string) string {
	return filepath.Join(a.dataDir, recordedLogDir, filepath.Base(id)+".log")
}

// keepOperatorLog copies the newest MaxRecordedLog bytes of the operator
// log of the session's cluster beside the store, before the cluster (and
// the log with it) is deleted: the host process's files, or the operator
// pod's log. A failure loses only the debrief's log lines: it is logged,
// and the stop goes on. A session asleep is not woken for it: the stop
// holds its lock, and its log is files on disk.
func (a *App) keepOperatorLog(ctx context.Context, id string, p *cluster.Provider, name string) {
	var src oplog.Source
	st, err := a.sessions.Status(ctx, id)
	if err == nil {
		src, err = a.logOf(ctx, p, name, st.Lab)
	}
	switch s := src.(type) {
	case nil:
	case oplog.Files:
		err = writeTail(a.recordedLog(id), s, MaxRecordedLog)
	default:
		err = writeLines(ctx, a.recordedLog(id), s, MaxRecordedLog)
	}
	if err != nil {
		a.log.Warn("keep the operator log for the debrief", "session", id, "err", err)
	}
}

// writeLines writes the newest lines of src, at most max bytes of them in
// the CRI format, to path; it replaces path at once.
func writeLines(ctx context.Context, path string, src oplog.Source, max int) error {
	var lines [][]byte
	size := 0
	err := src.Lines(ctx, false, func(l oplog.Line) error {
		b := oplog.FormatCRI(l)
		lines = append(lines, b)
		size += len(b)
		for size > max && len(lines) > 0 {
			size -= len(lines[0])
			lines = lines[1:]
		}
		return nil
	})
	if err != nil {
		return err
	}
	return replaceFile(path, bytes.Join(lines, nil))
}

// writeTail writes the newest max bytes of files, read as one log oldest
// first, to path, starting at a whole line; it replaces path at once.
func writeTail(path string, files []string, max int) error {
	var parts [][]byte
	left := max
	for i := len(files) - 1; i >= 0 && left > 0; i-- {
		b, err := tail(files[i], left)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		parts = append([][]byte{b}, parts...)
		left -= len(b)
	}
	return replaceFile(path, bytes.Join(parts, nil))
}

// replaceFile writes b to path through a temporary file, so that a reader
// sees the old file or the new one, whole.
func replaceFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// tail returns at most the last n bytes of the file at path, from the
// start of a line: a line cut by the bound is left out whole.
func tail(path string, n int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(fi.Size()-int64(n), 0)
	b := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if off > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil, nil
		}
		b = b[i+1:]
	}
	return b, nil
}
