// Package clusterview watches one PostgresCluster and what a learner looks
// at beside it — its pods and their roles, the -rw and -ro endpoints, the
// namespace's events — and emits a JSON snapshot (View) after each change.
//
// It is driven by client-go informers, not polling: one list and one watch
// per kind, bursts of changes coalesced into one snapshot. A Watcher is an
// upstream of package stream, so one set of watches serves every viewer.
package clusterview
