// Package store keeps oplab's sessions, their timelines and their results,
// and the classes, instructors and sign-ins of a classroom, in a SQLite
// file (pure Go driver, no cgo) under the data directory or in a
// PostgreSQL database.
//
// The schema is migrated in code (see migrations) when the store is
// opened. A SQLite file runs in WAL mode with a busy timeout, so several
// oplab processes (a CLI command while another follows the log) can share
// it. Writes that belong together (a session's new state and the timeline
// event that records it) are one transaction, so a crash never leaves one
// without the other. Session updates are optimistic: each carries the
// version it read, and a concurrent writer's change is reported as
// ErrConflict rather than silently overwritten.
//
// OpenPostgres opens the same store in a PostgreSQL database, so that
// several oplab servers can share it. *DB is one implementation for both:
// the statements are written once, and a dialect supplies what differs —
// numbered placeholders, the schema's 64-bit integers, and the locks that
// stand in for SQLite's single writer (an advisory lock so that one server
// migrates and the others wait, another so that events commit in seq
// order, FOR UPDATE where a check reads before it writes). The tests run
// every behaviour against both, PostgreSQL on a server they start.
//
// Callers define the interface they need where they use it (the session
// package does); *DB implements it.
package store
