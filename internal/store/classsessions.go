package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// LinkSession records that session sessionID runs in class classID. A
// session belongs to one class: linking it again to the same class does
// nothing, to another is ErrExists. An unknown session or class is
// ErrNotFound.
func (s *DB) LinkSession(ctx context.Context, sessionID, classID string) error {
	err := s.tx(ctx, func(tx conn) error {
		// Insert first, read only if the session was linked already: a
		// link made meanwhile by another server is then read, not missed.
		res, err := tx.ExecContext(ctx, `INSERT INTO class_sessions (session_id, class_id) VALUES (?, ?)
			ON CONFLICT (session_id) DO NOTHING`, sessionID, classID)
		if err != nil {
			if isForeignKey(err) {
				return ErrNotFound
			}
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		var current string
		if err := tx.QueryRowContext(ctx, `SELECT class_id FROM class_sessions WHERE session_id = ?`, sessionID).Scan(&current); err != nil {
			return err
		}
		if current != classID {
			return fmt.Errorf("already in class %s: %w", current, ErrExists)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("link session %q to class %s: %w", sessionID, classID, err)
	}
	return nil
}

// SessionClass returns the id of the class session sessionID runs in;
// ErrNotFound when it runs in none.
func (s *DB) SessionClass(ctx context.Context, sessionID string) (string, error) {
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT class_id FROM class_sessions WHERE session_id = ?`, sessionID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("class of session %q: %w", sessionID, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("class of session %q: %w", sessionID, err)
	}
	return id, nil
}

// ClassSessions lists the sessions of a class, oldest first.
func (s *DB) ClassSessions(ctx context.Context, classID string) ([]Session, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+prefixed("s.", sessionRead)+` FROM sessions s
		JOIN class_sessions cs ON cs.session_id = s.id WHERE cs.class_id = ? ORDER BY s.created_at, s.id`, classID)
	if err != nil {
		return nil, fmt.Errorf("list sessions of class %s: %w", classID, err)
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions of class %s: %w", classID, err)
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions of class %s: %w", classID, err)
	}
	return out, nil
}

// CountSessions returns how many sessions are in each state.
func (s *DB) CountSessions(ctx context.Context) (map[string]int, error) {
	return s.countBy(ctx, `SELECT state, COUNT(*) FROM sessions GROUP BY state`)
}

// EventsOfKind returns the events of a session's timeline whose kind is one
// of kinds, oldest first.
func (s *DB) EventsOfKind(ctx context.Context, sessionID string, kinds ...string) ([]Event, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	args := []any{sessionID}
	for _, k := range kinds {
		args = append(args, k)
	}
	evs, err := s.queryEvents(ctx, `SELECT seq, session_id, at, kind, exercise, message, data FROM events
		WHERE session_id = ? AND kind IN (?`+strings.Repeat(", ?", len(kinds)-1)+`) ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("read timeline of session %q: %w", sessionID, err)
	}
	return evs, nil
}

// prefixed qualifies each of a comma-separated list of columns.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ", ")
	for i, c := range cols {
		cols[i] = p + c
	}
	return strings.Join(cols, ", ")
}
