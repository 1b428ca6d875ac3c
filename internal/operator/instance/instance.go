// Package instance controls the PostgreSQL server inside one instance pod:
// it reads the server's role and WAL position and promotes a replica.
//
// The reconciler depends only on the Instance interface. Two
// implementations exist: one talks SQL to a real PostgreSQL server
// (pg_is_in_recovery(), pg_last_wal_receive_lsn(), pg_promote()), the other
// simulates a server in the pod's annotations for clusters where no
// container runs (the embedded provider).
package instance

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
)

// Instance controls the PostgreSQL server of an instance pod.
type Instance interface {
	// Status reports the server's role and WAL position. A server that has
	// not been set up yet (a fresh pod in simulation) reports
	// Initialized=false.
	Status(ctx context.Context, pod *corev1.Pod) (Status, error)
	// Promote turns the server into a primary: a replica leaves recovery; a
	// fresh server is bootstrapped as the first primary. Promoting a primary
	// does nothing.
	Promote(ctx context.Context, pod *corev1.Pod) error
	// Follow makes the server a streaming replica of primary, the pod named
	// by primary. It sets up a fresh server from the primary and makes a
	// former primary rejoin. Following the current upstream does nothing.
	Follow(ctx context.Context, pod *corev1.Pod, primary *corev1.Pod) error
	// Demote stops the server accepting writes, before another server is
	// promoted, so that two primaries never run at once. A simulated
	// server becomes a replica with no upstream yet. A real server cannot
	// be demoted over SQL: the SQL implementation returns an error
	// wrapping ErrNeedsRestart, and the pod must be stopped (PostgreSQL's
	// shutdown first sends the connected replicas all of its WAL).
	// Demoting a replica does nothing.
	Demote(ctx context.Context, pod *corev1.Pod) error
	// Mode names the implementation for status and logs: "sql" or
	// "simulated".
	Mode() string
}

// Status is what an instance reports about its server.
type Status struct {
	// Initialized is false for a server with no data directory yet.
	Initialized bool
	// InRecovery is true on a replica (pg_is_in_recovery()).
	InRecovery bool
	// ReceivedLSN is the last WAL position received from the primary
	// (pg_last_wal_receive_lsn()); zero on a primary.
	ReceivedLSN LSN
	// ReplayedLSN is the last WAL position replayed (pg_last_wal_replay_lsn());
	// zero on a primary.
	ReplayedLSN LSN
	// CurrentLSN is the primary's current WAL write position
	// (pg_current_wal_lsn()); zero on a replica.
	CurrentLSN LSN
	// Upstream is the pod a replica streams from, when known.
	Upstream string
	// NoUpstream: a standby configured to stream from nobody (no
	// primary_conninfo) — a former primary's data started in recovery when
	// no primary answered. It never catches up; it must be cloned again.
	NoUpstream bool
}

// IsPrimary reports whether the server runs as a primary.
func (s Status) IsPrimary() bool { return s.Initialized && !s.InRecovery }

// Position is how far the server's WAL has got: the current LSN on a
// primary, the furthest of received and replayed on a replica. Failover
// elects the ready replica with the highest Position.
func (s Status) Position() LSN {
	if !s.InRecovery {
		return s.CurrentLSN
	}
	return max(s.ReceivedLSN, s.ReplayedLSN)
}

// LSN, ParseLSN and the SQL implementation live in sql.go.

// Mode names.
const (
	ModeSQL       = "sql"
	ModeSimulated = "simulated"
)

// ErrUnreachable is returned (wrapped) when the server cannot be reached.
var ErrUnreachable = errors.New("instance unreachable")
