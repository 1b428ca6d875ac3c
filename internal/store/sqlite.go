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

// Open opens (creating if needed) the store in the SQLite file at path and
// migrates its schema to the latest version.
func Open(ctx context.Context, path string) (*DB, error) {
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
	return migrated(ctx, newDB(db, sqliteDialect, path, path))
}

// OpenDir opens the store in dataDir.
func OpenDir(ctx context.Context, dataDir string) (*DB, error) {
	return Open(ctx, filepath.Join(dataDir, FileName))
}
