package store

import (
	"context"
	"fmt"
	"time"
)

// AppendEvents adds evs to the end of a session's timeline in one
// transaction, setting each one's Seq (and At, when zero).
func (s *DB) AppendEvents(ctx context.Context, sessionID string, evs ...*Event) error {
	err := s.tx(ctx, func(tx conn) error { return appendEvents(ctx, tx, sessionID, evs) })
	if err != nil {
		return fmt.Errorf("append to timeline of session %q: %w", sessionID, err)
	}
	return nil
}

func appendEvents(ctx context.Context, tx conn, sessionID string, evs []*Event) error {
	if len(evs) > 0 && tx.d.eventsLock != "" {
		if _, err := tx.ExecContext(ctx, tx.d.eventsLock); err != nil {
			return fmt.Errorf("wait for earlier events: %w", err)
		}
	}
	for _, ev := range evs {
		ev.SessionID = sessionID
		if ev.At.IsZero() {
			ev.At = time.Now().UTC()
		}
		data := jsonText(ev.Data)
		err := tx.QueryRowContext(ctx, `INSERT INTO events (session_id, at, kind, exercise, message, data) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`,
			sessionID, unixNano(ev.At), ev.Kind, ev.Exercise, ev.Message, data).Scan(&ev.Seq)
		if err != nil {
			return fmt.Errorf("append %s event: %w", ev.Kind, err)
		}
	}
	return nil
}

// Events returns a session's timeline after seq (0 for all of it), oldest
// first.
func (s *DB) Events(ctx context.Context, sessionID string, after int64) ([]Event, error) {
	evs, err := s.queryEvents(ctx, `SELECT seq, session_id, at, kind, exercise, message, data FROM events
		WHERE session_id = ? AND seq > ? ORDER BY seq`, sessionID, after)
	if err != nil {
		return nil, fmt.Errorf("read timeline of session %q: %w", sessionID, err)
	}
	return evs, nil
}

// EventsAfter returns up to limit events of every session after seq,
// oldest first: a dashboard that watches a whole class polls it with the
// last seq it saw (seqs grow across sessions).
func (s *DB) EventsAfter(ctx context.Context, after int64, limit int) ([]Event, error) {
	evs, err := s.queryEvents(ctx, `SELECT seq, session_id, at, kind, exercise, message, data FROM events
		WHERE seq > ? ORDER BY seq LIMIT ?`, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read timelines: %w", err)
	}
	return evs, nil
}

// LastEventSeq returns the seq of the newest event of any session, 0 when
// there is none: where a watcher that wants only what comes next starts.
func (s *DB) LastEventSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM events`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("read last event: %w", err)
	}
	return seq, nil
}

func (s *DB) queryEvents(ctx context.Context, q string, args ...any) ([]Event, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var ev Event
		var at int64
		var data string
		if err := rows.Scan(&ev.Seq, &ev.SessionID, &at, &ev.Kind, &ev.Exercise, &ev.Message, &data); err != nil {
			return nil, err
		}
		ev.At, ev.Data = fromNano(at), []byte(data)
		out = append(out, ev)
	}
	return out, rows.Err()
}
