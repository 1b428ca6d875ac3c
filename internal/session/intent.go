package session

import (
	"context"
	"encoding/json"
	"os"
	"time"
)

// Operations recorded as Pending before they act on a cluster.
const (
	OpChaos = "chaos"
	OpReset = "reset"
	OpStop  = "stop"
	// OpRebuild is a reset that makes the cluster anew (see Reset).
	OpRebuild = "rebuild"
)

// Pending is an operation on a session's cluster that has begun and not
// ended. It is written before the operation acts and cleared in the same
// write as its outcome, so one found by a later command that holds the
// session's lock belongs to an oplab that died half-way.
type Pending struct {
	Op    string    `json:"op"`
	Since time.Time `json:"since"`
	// PID is the process that began it, for the message of the command
	// that finds it interrupted.
	PID int `json:"pid"`
	// Reason is a stop's reason.
	Reason string `json:"reason,omitempty"`
}

// intend records that op is about to act on s's cluster.
func (m *Manager) intend(ctx context.Context, s *live, op, reason string) error {
	s.work.Pending = &Pending{Op: op, Since: time.Now().UTC(), PID: os.Getpid(), Reason: reason}
	return m.save(ctx, s, nil)
}

// unintend clears an intent whose operation ended without an outcome to
// record (refused before it acted, or failed and reported).
func (m *Manager) unintend(ctx context.Context, s *live) error {
	if s.work.Pending == nil {
		return nil
	}
	s.work.Pending = nil
	return m.save(ctx, s, nil)
}

// pendingOf decodes the pending operation of a stored working state
// without the rest; nil when there is none or it cannot be read.
func pendingOf(data []byte) *Pending {
	var w struct {
		Pending *Pending `json:"pending"`
	}
	if len(data) == 0 || json.Unmarshal(data, &w) != nil {
		return nil
	}
	return w.Pending
}
