package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// FileName is the store's file under the data directory.
const FileName = "oplab.db"

// BusyTimeout is how long a writer waits for another to finish.
const BusyTimeout = 10 * time.Second

// SQLite is the store on a SQLite file.
type SQLite struct {
	db   *sql.DB
	path string
}

// Open opens (creating if needed) the store at path and migrates its schema
// to the latest version.
func Open(ctx context.Context, path string) (*SQLite, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(ON)")
	// BEGIN IMMEDIATE takes the write lock up front, so two writers never
	// both read and then fail to upgrade (SQLITE_BUSY without waiting).
	q.Set("_txlock", "immediate")
	dsn := "file:" + path + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	s := &SQLite{db: db, path: path}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// OpenDir opens the store in dataDir.
func OpenDir(ctx context.Context, dataDir string) (*SQLite, error) {
	return Open(ctx, filepath.Join(dataDir, FileName))
}

// Path is the store's file.
func (s *SQLite) Path() string { return s.path }

// Ping reads from the database: nil when the store can answer.
func (s *SQLite) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sessions LIMIT 1").Scan(&one); err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	return nil
}

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

// tx runs fn in a transaction and commits it when fn returns nil.
func (s *SQLite) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
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
