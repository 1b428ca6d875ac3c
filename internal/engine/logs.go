package engine

import (
	"context"
	"errors"
	"os"
	"time"

	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/internal/oplog"
)

// LogSource reads the operator's log lines written at or after since,
// oldest first.
type LogSource interface {
	Lines(ctx context.Context, since time.Time) ([]string, error)
}

// Since reads an operator's log, wherever it is (an oplog.Source: the host
// process's files, the operator pod's log, as the page and `oplab logs`
// read it), keeping the lines written at or after since. A log not
// written yet (no file, no running pod) is read as empty.
type Since struct {
	Log oplog.Source
}

var _ LogSource = Since{}

// Lines implements LogSource. A line that is not in the CRI format has no
// time and is kept whatever since is.
func (s Since) Lines(ctx context.Context, since time.Time) ([]string, error) {
	src := s.Log
	if p, ok := src.(install.PodLog); ok {
		p.Since = since // the API server leaves out the older lines
		src = p
	}
	var out []string
	err := src.Lines(ctx, false, func(l oplog.Line) error {
		if l.Time.IsZero() || !l.Time.Before(since) {
			out = append(out, l.Text)
		}
		return nil
	})
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, install.ErrNoOperatorPod) {
		return out, nil
	}
	return out, err
}
