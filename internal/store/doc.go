// Package store keeps oplab's sessions, their timelines and their results
// in a SQLite file (pure Go driver, no cgo) under the data directory.
//
// The schema is migrated in code (see migrations) when the file is opened;
// the database runs in WAL mode with a busy timeout, so several oplab
// processes (a CLI command while another follows the log) can share it.
// Writes that belong together (a session's new state and the timeline event
// that records it) are one transaction, so a crash never leaves one without
// the other. Session updates are optimistic: each carries the version it
// read, and a concurrent writer's change is reported as ErrConflict rather
// than silently overwritten.
//
// Callers define the interface they need where they use it (the session
// package does); *SQLite is the implementation here, and a PostgreSQL one
// can sit beside it for a server farm.
package store
