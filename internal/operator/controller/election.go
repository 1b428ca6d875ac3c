package controller

import (
	pgv1 "oplab.dev/oplab/api/v1"
)

// elect picks the replica to promote: among usable replicas other than
// exclude whose ordinal is below limit (pods that a scale-down keeps), the
// one whose WAL has got furthest; on a tie, the lowest ordinal. It returns
// nil when there is none.
func elect(ms members, exclude string, limit int) *member {
	var best *member
	for _, m := range ms {
		if !m.usable() || !m.status.InRecovery || m.name() == exclude || m.ordinal < 0 || m.ordinal >= limit {
			continue
		}
		if best == nil || m.status.Position() > best.status.Position() {
			best = m
		}
	}
	return best
}

// primaryHealth says whether m can go on serving as the primary and, if
// not, why, in words for the status and the log.
func primaryHealth(name string, m *member) (bool, string) {
	switch {
	case m == nil:
		return false, "primary pod " + name + " does not exist"
	case m.pod.DeletionTimestamp != nil:
		return false, "primary pod " + name + " is being deleted"
	case !m.ready:
		return false, "primary pod " + name + " is not ready"
	case m.err != nil:
		return false, "primary " + name + " is unreachable: " + m.err.Error()
	case !m.status.Initialized:
		return false, "primary pod " + name + " was recreated without its data"
	case m.status.InRecovery:
		return false, "primary " + name + " is running as a replica"
	}
	return true, ""
}

// stsReplicas is how many pods the StatefulSet should run: spec.replicas,
// raised so that neither the current nor the target primary is removed
// while a scale-down waits for its switchover.
func stsReplicas(pgc *pgv1.PostgresCluster) int32 {
	n := pgc.Spec.Replicas
	for _, name := range []string{pgc.Status.CurrentPrimary, pgc.Status.TargetPrimary} {
		if o := int32(ordinal(pgc.Name, name)); o >= n {
			n = o + 1
		}
	}
	return n
}
