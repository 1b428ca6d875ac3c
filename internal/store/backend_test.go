package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"oplab.dev/oplab/internal/pgtest"
)

// backend is a database the store runs on, as the tests see it.
type backend struct {
	name string
	// fresh returns where a new, empty database is: a file path or a
	// connection string.
	fresh func(t *testing.T) string
	// open opens the store at where, as the program does.
	open func(ctx context.Context, where string) (*DB, error)
	// openRaw opens the database at where without the store, for a test
	// that writes one by hand.
	openRaw func(where string) (*sql.DB, error)
	// server says the backend needs a database server, which -short does
	// not start.
	server bool
	d      *dialect
}

var backends = []backend{
	{
		name: "sqlite",
		// A directory that does not exist yet: Open makes it.
		fresh: func(t *testing.T) string { return filepath.Join(t.TempDir(), "data", FileName) },
		open:  Open,
		openRaw: func(path string) (*sql.DB, error) {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, err
			}
			return sql.Open("sqlite", "file:"+path)
		},
		d: sqliteDialect,
	},
	{
		name:    "postgres",
		fresh:   func(t *testing.T) string { return pgtest.Fresh(t) },
		open:    OpenPostgres,
		openRaw: func(url string) (*sql.DB, error) { return sql.Open("pgx", url) },
		server:  true,
		d:       postgresDialect,
	},
}

func TestMain(m *testing.M) {
	code := m.Run()
	if err := pgtest.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// eachBackend runs test once on each backend, as parallel subtests named
// after them. -short skips the PostgreSQL one, which needs a server.
func eachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			if b.server && testing.Short() {
				t.Skipf("needs a PostgreSQL server (initdb, pg_ctl), which -short does not start")
			}
			t.Parallel()
			test(t, b)
		})
	}
}

// newStore opens a store on a new, empty database.
func (b backend) newStore(t *testing.T) *DB {
	t.Helper()
	return b.openStore(t, b.fresh(t))
}

// openStore opens the store at where, to be closed when the test ends.
func (b backend) openStore(t *testing.T, where string) *DB {
	t.Helper()
	s, err := b.open(t.Context(), where)
	if err != nil {
		t.Fatalf("open %s store: %v", b.name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// raw opens the database at where without the store, to write what an
// older oplab would have.
func (b backend) raw(t *testing.T, where string) *sql.DB {
	t.Helper()
	db, err := b.openRaw(where)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
