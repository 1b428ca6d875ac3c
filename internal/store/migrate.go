package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// migrations are the schema, one step per version; migrations[i] takes the
// schema from version i to i+1. Never edit a released step: add one.
var migrations = []string{
	// 1: sessions, their timeline and their results.
	`CREATE TABLE sessions (
		id         TEXT PRIMARY KEY,
		learner    TEXT NOT NULL,
		lab        TEXT NOT NULL,
		cluster    TEXT NOT NULL,
		provider   TEXT NOT NULL,
		state      TEXT NOT NULL,
		exercise   INTEGER NOT NULL DEFAULT 0,
		lang       TEXT NOT NULL DEFAULT 'en',
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL,
		version    INTEGER NOT NULL DEFAULT 1
	);
	CREATE INDEX sessions_learner ON sessions (learner, state);
	CREATE TABLE events (
		seq        INTEGER PRIMARY KEY AUTOINCREMENT,
		session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
		at         INTEGER NOT NULL,
		kind       TEXT NOT NULL,
		exercise   TEXT NOT NULL DEFAULT '',
		message    TEXT NOT NULL DEFAULT '',
		data       TEXT NOT NULL DEFAULT '{}'
	);
	CREATE INDEX events_session ON events (session_id, seq);
	CREATE TABLE results (
		session_id  TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
		kind        TEXT NOT NULL,
		item        TEXT NOT NULL,
		score       INTEGER NOT NULL,
		total       INTEGER NOT NULL,
		passed      INTEGER NOT NULL,
		recovery_ns INTEGER NOT NULL DEFAULT 0,
		at          INTEGER NOT NULL,
		data        TEXT NOT NULL DEFAULT '{}',
		PRIMARY KEY (session_id, kind, item)
	);`,
	// 2: the session package's working state (the current attempt).
	`ALTER TABLE sessions ADD COLUMN data TEXT NOT NULL DEFAULT '{}';`,
	// 3: instructors, classes, their members and the sessions they run.
	// Passwords and rejoin codes are stored only as hashes; a class's join
	// code is kept as is because the instructor shows it to the room for
	// as long as the class runs (see the class package).
	`CREATE TABLE instructors (
		name          TEXT PRIMARY KEY,
		password_hash TEXT NOT NULL,
		admin         INTEGER NOT NULL DEFAULT 0,
		created_at    INTEGER NOT NULL,
		updated_at    INTEGER NOT NULL,
		version       INTEGER NOT NULL DEFAULT 1
	);
	CREATE TABLE classes (
		id            TEXT PRIMARY KEY,
		name          TEXT NOT NULL UNIQUE,
		labs          TEXT NOT NULL DEFAULT '[]',
		join_code     TEXT NOT NULL UNIQUE,
		capacity      INTEGER NOT NULL DEFAULT 0,
		opens_at      INTEGER NOT NULL DEFAULT 0,
		closes_at     INTEGER NOT NULL DEFAULT 0,
		time_limit_ns INTEGER NOT NULL DEFAULT 0,
		owner         TEXT NOT NULL REFERENCES instructors (name),
		closed        INTEGER NOT NULL DEFAULT 0,
		created_at    INTEGER NOT NULL,
		updated_at    INTEGER NOT NULL,
		version       INTEGER NOT NULL DEFAULT 1
	);
	CREATE INDEX classes_owner ON classes (owner);
	CREATE TABLE class_members (
		id           TEXT PRIMARY KEY,
		class_id     TEXT NOT NULL REFERENCES classes (id) ON DELETE CASCADE,
		display_name TEXT NOT NULL COLLATE NOCASE,
		rejoin_hash  TEXT NOT NULL UNIQUE,
		joined_at    INTEGER NOT NULL,
		UNIQUE (class_id, display_name)
	);
	CREATE TABLE class_sessions (
		session_id TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
		class_id   TEXT NOT NULL REFERENCES classes (id) ON DELETE CASCADE
	);
	CREATE INDEX class_sessions_class ON class_sessions (class_id);`,
	// 4: a class's warm sessions per lab, as JSON ({"failover": 3}).
	`ALTER TABLE classes ADD COLUMN warm TEXT NOT NULL DEFAULT '{}';`,
	// 5: sign-ins, so that a cookie can be withdrawn: a cookie names its
	// sign-in by a secret kept here only as a hash, and a request is
	// served only while the row (and the member, class or instructor it
	// is bound to) says so. A learner's class_id is their class when they
	// signed in ('' for a learner in none).
	`CREATE TABLE sign_ins (
		id         TEXT PRIMARY KEY,
		learner    TEXT NOT NULL DEFAULT '',
		instructor TEXT NOT NULL DEFAULT '',
		class_id   TEXT NOT NULL DEFAULT '',
		created_at INTEGER NOT NULL,
		expires_at INTEGER NOT NULL
	);
	CREATE INDEX sign_ins_learner ON sign_ins (learner, created_at);
	CREATE INDEX sign_ins_instructor ON sign_ins (instructor, created_at);
	CREATE INDEX sign_ins_class ON sign_ins (class_id);
	CREATE INDEX sign_ins_expires ON sign_ins (expires_at);`,
	// 6: a session's newest events of a kind (its last step, the hints of
	// an attempt) are read without the rest of its timeline.
	`CREATE INDEX events_session_kind ON events (session_id, kind, seq);`,
	// 7: when a session's learner last looked at it (MarkSeen), apart from
	// its version: a page that is read does not change the session.
	`ALTER TABLE sessions ADD COLUMN seen_at INTEGER NOT NULL DEFAULT 0;`,
}

// SchemaVersion is the schema version this build migrates to.
func SchemaVersion() int { return len(migrations) }

// migrate applies the steps the database has not had yet, each in a
// transaction of its own, and refuses a database from a newer oplab.
func (s *DB) migrate(ctx context.Context) error {
	began := time.Now()
	for {
		done, err := s.migrateOne(ctx)
		if busy(err) && time.Since(began) < BusyTimeout {
			// Several processes opening a new SQLite file at once: while
			// one turns it to WAL, another's BEGIN is refused at once,
			// without the busy handler's wait (6 opens in 300 of four at
			// once, TestConcurrentOpenMigratesOnce). Try again.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
			continue
		}
		if err != nil || done {
			return err
		}
	}
}

// busy reports whether err is SQLite's SQLITE_BUSY, any of its extended
// codes included.
func busy(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 5
}

// migrateOne applies the next step, if any; done reports that none was
// left. The dialect's setup runs first in the same transaction, so that of
// two processes opening a new database at once, one migrates and the
// other then finds the steps done.
func (s *DB) migrateOne(ctx context.Context) (done bool, err error) {
	err = s.tx(ctx, func(tx conn) error {
		for _, stmt := range tx.d.migrationSetup {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("prepare to migrate %s schema: %w", tx.d.name, err)
			}
		}
		var v int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		switch {
		case v > len(migrations):
			return fmt.Errorf("schema version %d is newer than this oplab knows (%d): upgrade oplab", v, len(migrations))
		case v == len(migrations):
			done = true
			return nil
		}
		if _, err := tx.ExecContext(ctx, tx.d.schema(migrations[v])); err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`, v+1, time.Now().UnixNano()); err != nil {
			return fmt.Errorf("record schema version %d: %w", v+1, err)
		}
		return nil
	})
	return done, err
}

// Version reports the database's schema version.
func (s *DB) Version(ctx context.Context) (int, error) {
	var v int
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}
