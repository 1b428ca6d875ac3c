package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// DB is the store on a database: a SQLite file (Open) or a PostgreSQL
// database that several oplab servers share (OpenPostgres). Both run the
// same statements; the dialect holds what differs.
type DB struct {
	sql *sql.DB
	// db runs statements outside a transaction.
	db conn
	d  *dialect
	// path is the SQLite file, empty on PostgreSQL.
	path string
	// where names the database in errors (a file, or a PostgreSQL server
	// and database without credentials).
	where string
}

func newDB(db *sql.DB, d *dialect, path, where string) *DB {
	return &DB{sql: db, db: conn{r: db, d: d}, d: d, path: path, where: where}
}

// migrated migrates the schema of s and returns it; it closes the database
// when it cannot.
func migrated(ctx context.Context, s *DB) (*DB, error) {
	if err := s.migrate(ctx); err != nil {
		s.sql.Close()
		return nil, fmt.Errorf("open store %s: %w", s.where, err)
	}
	return s, nil
}

// Path is the store's file; empty on PostgreSQL.
func (s *DB) Path() string { return s.path }

// Ping reads from the database: nil when the store can answer.
func (s *DB) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sessions LIMIT 1").Scan(&one); err != nil {
		return fmt.Errorf("store %s: %w", s.where, err)
	}
	return nil
}

// Close closes the database.
func (s *DB) Close() error { return s.sql.Close() }

// tx runs fn in a transaction and commits it when fn returns nil.
func (s *DB) tx(ctx context.Context, fn func(conn) error) error {
	tx, err := s.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(conn{r: tx, d: s.d}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Times are stored as Unix nanoseconds (UTC); zero is stored as 0.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// jsonText is raw JSON as stored: an empty value is an empty object.
func jsonText(raw []byte) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}
