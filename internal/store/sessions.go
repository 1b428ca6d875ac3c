package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

const sessionColumns = `id, learner, lab, cluster, provider, state, exercise, lang, created_at, updated_at, version, data`

// sessionRead are the columns a session is read from: its own, and when
// it was last seen (MarkSeen), which no write of the session changes.
const sessionRead = sessionColumns + `, seen_at`

// CreateSession stores a new session (Version 1, Created and Updated set
// to now when zero) with its first timeline events, in one transaction.
func (s *DB) CreateSession(ctx context.Context, sess *Session, evs ...*Event) error {
	if sess.ID == "" {
		return errors.New("create session: empty id")
	}
	now := time.Now().UTC()
	if sess.Created.IsZero() {
		sess.Created = now
	}
	sess.Updated = sess.Created
	sess.Version = 1
	err := s.tx(ctx, func(tx conn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			sess.ID, sess.Learner, sess.Lab, sess.Cluster, sess.Provider, sess.State, sess.Exercise, sess.Lang,
			unixNano(sess.Created), unixNano(sess.Updated), sess.Version, jsonText(sess.Data))
		if err != nil {
			if isUnique(err) {
				return fmt.Errorf("session %q: %w", sess.ID, ErrExists)
			}
			return err
		}
		return appendEvents(ctx, tx, sess.ID, evs)
	})
	if err != nil {
		return fmt.Errorf("create session %q: %w", sess.ID, err)
	}
	return nil
}

// UpdateSession stores sess's fields (all but ID and Created) and appends
// evs, in one transaction, if the stored version is still sess.Version; it
// then bumps sess.Version. A concurrent change gives ErrConflict and
// changes nothing.
func (s *DB) UpdateSession(ctx context.Context, sess *Session, evs ...*Event) error {
	updated := time.Now().UTC()
	err := s.tx(ctx, func(tx conn) error {
		res, err := tx.ExecContext(ctx, `UPDATE sessions SET learner = ?, lab = ?, cluster = ?, provider = ?, state = ?, exercise = ?, lang = ?,
			data = ?, updated_at = ?, version = version + 1 WHERE id = ? AND version = ?`,
			sess.Learner, sess.Lab, sess.Cluster, sess.Provider, sess.State, sess.Exercise, sess.Lang,
			jsonText(sess.Data), unixNano(updated), sess.ID, sess.Version)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return conflictOrMissing(ctx, tx, sess.ID)
		}
		return appendEvents(ctx, tx, sess.ID, evs)
	})
	if err != nil {
		return fmt.Errorf("update session %q: %w", sess.ID, err)
	}
	sess.Version++
	sess.Updated = updated
	return nil
}

func conflictOrMissing(ctx context.Context, tx conn, id string) error {
	var v int64
	err := tx.QueryRowContext(ctx, `SELECT version FROM sessions WHERE id = ?`, id).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	return ErrConflict
}

// Session returns the session with the given id.
func (s *DB) Session(ctx context.Context, id string) (Session, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+sessionRead+` FROM sessions WHERE id = ?`, id)
	sess, err := scanSession(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fmt.Errorf("session %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Session{}, fmt.Errorf("read session %q: %w", id, err)
	}
	return sess, nil
}

// Sessions lists the sessions f selects, newest first.
func (s *DB) Sessions(ctx context.Context, f Filter) ([]Session, error) {
	var where []string
	var args []any
	if f.Learner != "" {
		where, args = append(where, "learner = ?"), append(args, f.Learner)
	}
	if f.Lab != "" {
		where, args = append(where, "lab = ?"), append(args, f.Lab)
	}
	if len(f.States) > 0 {
		where = append(where, "state IN (?"+strings.Repeat(", ?", len(f.States)-1)+")")
		for _, st := range f.States {
			args = append(args, st)
		}
	}
	q := `SELECT ` + sessionRead + ` FROM sessions`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at DESC, id"
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// DeleteSession removes a session with its timeline and results.
func (s *DB) DeleteSession(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete session %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("delete session %q: %w", id, ErrNotFound)
	}
	return nil
}

type scanner interface{ Scan(...any) error }

func scanSession(r scanner) (Session, error) {
	var s Session
	var created, updated, seen int64
	var data string
	err := r.Scan(&s.ID, &s.Learner, &s.Lab, &s.Cluster, &s.Provider, &s.State, &s.Exercise, &s.Lang, &created, &updated, &s.Version, &data, &seen)
	s.Created, s.Updated, s.Data = fromNano(created), fromNano(updated), []byte(data)
	if seen != 0 {
		s.Seen = fromNano(seen)
	}
	return s, err
}

// MarkSeen records that session id's learner looked at it at at: a page
// of it read, a command of theirs. It keeps the latest mark, does not
// change the session's version (a page read while a command writes the
// session is no conflict) and writes nothing for an unknown id.
func (s *DB) MarkSeen(ctx context.Context, id string, at time.Time) error {
	n := unixNano(at)
	if _, err := s.db.ExecContext(ctx, `UPDATE sessions SET seen_at = ? WHERE id = ? AND seen_at < ?`, n, id, n); err != nil {
		return fmt.Errorf("mark session %q seen: %w", id, err)
	}
	return nil
}
