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
package controller
