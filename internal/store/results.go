package store

import (
	"context"
	"fmt"
	"time"
)

// PutResult stores r as the result of its item, replacing an earlier one.
func (s *DB) PutResult(ctx context.Context, r *Result) error {
	if r.At.IsZero() {
		r.At = time.Now().UTC()
	}
	data := jsonText(r.Data)
	_, err := s.db.ExecContext(ctx, `INSERT INTO results (session_id, kind, item, score, total, passed, recovery_ns, at, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, kind, item) DO UPDATE SET score = excluded.score, total = excluded.total,
			passed = excluded.passed, recovery_ns = excluded.recovery_ns, at = excluded.at, data = excluded.data`,
		r.SessionID, r.Kind, r.Item, r.Score, r.Total, r.Passed, int64(r.Recovery), unixNano(r.At), data)
	if err != nil {
		return fmt.Errorf("store %s result %q of session %q: %w", r.Kind, r.Item, r.SessionID, err)
	}
	return nil
}

// Results returns a session's results, ordered by time.
func (s *DB) Results(ctx context.Context, sessionID string) ([]Result, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT session_id, kind, item, score, total, passed, recovery_ns, at, data
		FROM results WHERE session_id = ? ORDER BY at, kind, item`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("read results of session %q: %w", sessionID, err)
	}
	defer rows.Close()
	var out []Result
	for rows.Next() {
		var r Result
		var rec, at int64
		var data string
		if err := rows.Scan(&r.SessionID, &r.Kind, &r.Item, &r.Score, &r.Total, &r.Passed, &rec, &at, &data); err != nil {
			return nil, fmt.Errorf("read results of session %q: %w", sessionID, err)
		}
		r.Recovery, r.At, r.Data = time.Duration(rec), fromNano(at), []byte(data)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read results of session %q: %w", sessionID, err)
	}
	return out, nil
}
