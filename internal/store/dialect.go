package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// dialect is what differs between the databases the store runs on. The
// statements are written once, in the SQL both understand, with ?
// placeholders; a dialect says how to run them and supplies the few
// clauses that cannot be shared.
type dialect struct {
	// name is the database's name in messages.
	name string
	// numbered means placeholders are $1, $2, ... rather than ?.
	numbered bool
	// schema translates a migration step, written for SQLite, into the
	// dialect's DDL.
	schema func(step string) string
	// migrationSetup runs at the start of each migration transaction:
	// where needed it takes the lock that keeps two processes from
	// migrating at once, and it creates what the steps rely on.
	migrationSetup []string
	// eventsLock, when set, runs before a transaction appends events, so
	// that events commit in the order of their seqs and a watcher reading
	// after the last seq it saw never misses one (SQLite has one writer
	// at a time, so its seqs are in commit order already).
	eventsLock string
	// forUpdate ends a SELECT whose rows the transaction is about to
	// change on the strength of what it read ("" where a transaction
	// writes alone).
	forUpdate string
}

// schemaMigrations records the schema steps applied.
const schemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER PRIMARY KEY,
	applied_at INTEGER NOT NULL
)`

// sqliteDialect runs transactions with BEGIN IMMEDIATE (see Open), so a
// writer holds the file's write lock from its first read: nothing more
// is needed to serialize migrations, appends or read-then-write checks.
var sqliteDialect = &dialect{
	name:           "SQLite",
	schema:         func(step string) string { return step },
	migrationSetup: []string{schemaMigrations},
}

// rebind rewrites q's ? placeholders (outside quoted literals) into the
// dialect's own.
func (d *dialect) rebind(q string) string {
	if !d.numbered {
		return q
	}
	var b strings.Builder
	n, quoted := 0, false
	for _, r := range q {
		switch {
		case r == '\'':
			quoted = !quoted
		case r == '?' && !quoted:
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// args stores booleans as 0 and 1: the schema's flag columns are integers,
// as SQLite has no boolean type, and PostgreSQL does not turn a boolean
// into an integer by itself.
func (d *dialect) args(args []any) []any {
	var out []any // a copy, once there is a boolean: the caller's slice is theirs
	for i, a := range args {
		b, ok := a.(bool)
		if !ok {
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = 0
		if b {
			out[i] = 1
		}
	}
	if out == nil {
		return args
	}
	return out
}

// sqlRunner is what *sql.DB and *sql.Tx have in common.
type sqlRunner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// conn runs the store's statements on a database or in a transaction, in
// the dialect's placeholders and argument types.
type conn struct {
	r sqlRunner
	d *dialect
}

func (c conn) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return c.r.ExecContext(ctx, c.d.rebind(q), c.d.args(args)...)
}

func (c conn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return c.r.QueryContext(ctx, c.d.rebind(q), c.d.args(args)...)
}

func (c conn) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return c.r.QueryRowContext(ctx, c.d.rebind(q), c.d.args(args)...)
}

// PostgreSQL's error codes for the constraint failures the store reports.
const (
	pgUniqueViolation     = "23505"
	pgForeignKeyViolation = "23503"
)

// isUnique reports a UNIQUE or PRIMARY KEY constraint failure. The pure Go
// SQLite driver reports it in the message only; PostgreSQL by its code.
func isUnique(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == pgUniqueViolation
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed")
}

// isUniqueOn reports a failure of the UNIQUE constraint of one column, as
// the schema declares it (column ... UNIQUE).
func isUniqueOn(err error, table, column string) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == pgUniqueViolation && pg.ConstraintName == table+"_"+column+"_key"
	}
	return isUnique(err) && strings.Contains(err.Error(), table+"."+column)
}

// isForeignKey reports a FOREIGN KEY constraint failure.
func isForeignKey(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == pgForeignKeyViolation
	}
	return strings.Contains(err.Error(), "FOREIGN KEY constraint failed")
}
