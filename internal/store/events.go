package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// AppendEvents adds evs to the end of a session's timeline in one
// transaction, setting each one's Seq (and At, when zero). Each event's
// texts and data are cut first to what an event may store (MaxEventText,
// MaxEventData): evs then hold what was stored.
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
		bound(ev)
		data := jsonText(ev.Data)
		err := tx.QueryRowContext(ctx, `INSERT INTO events (session_id, at, kind, exercise, message, data) VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`,
			sessionID, unixNano(ev.At), ev.Kind, ev.Exercise, ev.Message, data).Scan(&ev.Seq)
		if err != nil {
			return fmt.Errorf("append %s event: %w", ev.Kind, err)
		}
	}
	return nil
}

// eventColumns are an event's columns, in the order queryEvents scans.
const eventColumns = `seq, session_id, at, kind, exercise, message, data`

// Events returns a page of a session's timeline: up to limit events after
// seq (0 from the start), oldest first. A reader follows with the last
// one's seq until a page comes back short.
func (s *DB) Events(ctx context.Context, sessionID string, after int64, limit int) ([]Event, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("read timeline of session %q: a page of %d events: give a positive limit", sessionID, limit)
	}
	evs, err := s.queryEvents(ctx, `SELECT `+eventColumns+` FROM events
		WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, sessionID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("read timeline of session %q: %w", sessionID, err)
	}
	return evs, nil
}

// EventFilter picks events of one session's timeline; its zero value
// picks them all.
type EventFilter struct {
	// Kinds, when given, are the kinds picked.
	Kinds []string
	// Exercise, when given, is the exercise the events belong to.
	Exercise string
	// Since, when given, leaves out events before it.
	Since time.Time
}

// where is f's condition on a session's events and its arguments.
func (f EventFilter) where(sessionID string) (string, []any) {
	q, args := `session_id = ?`, []any{sessionID}
	if len(f.Kinds) > 0 {
		q += ` AND kind IN (?` + strings.Repeat(", ?", len(f.Kinds)-1) + `)`
		for _, k := range f.Kinds {
			args = append(args, k)
		}
	}
	if f.Exercise != "" {
		q += ` AND exercise = ?`
		args = append(args, f.Exercise)
	}
	if !f.Since.IsZero() {
		q += ` AND at >= ?`
		args = append(args, unixNano(f.Since))
	}
	return q, args
}

// LatestEvents returns the newest limit events of a session's timeline
// that f picks, oldest first: the end of a timeline, read without the
// rest of it.
func (s *DB) LatestEvents(ctx context.Context, sessionID string, f EventFilter, limit int) ([]Event, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("read timeline of session %q: the newest %d events: give a positive limit", sessionID, limit)
	}
	where, args := f.where(sessionID)
	evs, err := s.queryEvents(ctx, `SELECT `+eventColumns+` FROM events
		WHERE `+where+` ORDER BY seq DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("read timeline of session %q: %w", sessionID, err)
	}
	slices.Reverse(evs)
	return evs, nil
}

// LastEvent returns the newest event of a session's timeline that f
// picks; ok is false when there is none.
func (s *DB) LastEvent(ctx context.Context, sessionID string, f EventFilter) (ev Event, ok bool, err error) {
	evs, err := s.LatestEvents(ctx, sessionID, f, 1)
	if err != nil || len(evs) == 0 {
		return Event{}, false, err
	}
	return evs[0], true, nil
}

// CountEvents counts the events of a session's timeline that f picks, by
// exercise ("" for those of none).
func (s *DB) CountEvents(ctx context.Context, sessionID string, f EventFilter) (map[string]int, error) {
	where, args := f.where(sessionID)
	rows, err := s.db.QueryContext(ctx, `SELECT exercise, COUNT(*) FROM events WHERE `+where+` GROUP BY exercise`, args...)
	if err != nil {
		return nil, fmt.Errorf("count events of session %q: %w", sessionID, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var ex string
		var n int
		if err := rows.Scan(&ex, &n); err != nil {
			return nil, fmt.Errorf("count events of session %q: %w", sessionID, err)
		}
		out[ex] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count events of session %q: %w", sessionID, err)
	}
	return out, nil
}

// EventsAfter returns up to limit events of every session after seq,
// oldest first: a dashboard that watches a whole class polls it with the
// last seq it saw (seqs grow across sessions).
func (s *DB) EventsAfter(ctx context.Context, after int64, limit int) ([]Event, error) {
	evs, err := s.queryEvents(ctx, `SELECT `+eventColumns+` FROM events
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
