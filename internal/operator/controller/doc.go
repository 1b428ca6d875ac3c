// Package controller reconciles PostgresClusters: it keeps the owned
// objects built by package specs in place, decides which instance is the
// primary (bootstrap, failover, switchover, scale-down), labels pods with
// their role so the -rw and -ro Services follow, and reports what it sees
// in the status, in events, in metrics and in one log line per reconcile.
//
// The reconciler is level-triggered: every pass reads the cluster, its
// pods and their instances afresh, and acts only on differences, so a pass
// over an unchanged cluster writes nothing. Decisions that must not be
// taken twice (choosing a new primary) are recorded in the status with an
// optimistic lock before they are acted on.
//
// A reading order, one concern per file:
//
//   - reconciler.go: the watches, and one pass from read to status write
//   - members.go: the instance pods and what their servers report
//   - roles.go: bootstrap, and making every other instance a replica
//   - failover.go: noticing a failed primary, fencing it, electing a replica
//   - switchover.go: planned changes of primary, and carrying any change out
//   - election.go: the pure decisions (who to elect, StatefulSet size)
//   - objects.go: creating and updating the owned objects
//   - trouble.go: quota and StorageClass problems a learner must find
//   - status.go: conditions, phase and the status write
//   - writes.go: labels, events and the optimistically locked writes
//   - log.go, metrics.go, ratelimit.go, rbac.go: what the operator shows,
//     how it backs off, and the permissions it needs
package controller
