package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

const memberColumns = `id, class_id, display_name, rejoin_hash, joined_at`

// AddMember adds m to class c in one transaction, if c is still at the
// version the caller read (ErrConflict otherwise: the class was edited or
// closed meanwhile) and has room under its capacity (ErrFull). A display
// name already taken in the class (compared without case) is ErrExists.
func (s *DB) AddMember(ctx context.Context, c *Class, m *Member) error {
	if m.ID == "" || m.Name == "" || m.RejoinHash == "" {
		return errors.New("add member: an id, a display name and a rejoin hash are required")
	}
	m.ClassID = c.ID
	if m.Joined.IsZero() {
		m.Joined = time.Now().UTC()
	}
	err := s.tx(ctx, func(tx conn) error {
		// The class's row stays locked until the member is in, so two
		// joins cannot both count the last free place; the count is a
		// statement of its own so that it sees the joins committed
		// while this one waited for the lock.
		var version int64
		var capacity, members int
		err := tx.QueryRowContext(ctx, `SELECT version, capacity FROM classes WHERE id = ?`+tx.d.forUpdate, c.ID).Scan(&version, &capacity)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrNotFound
		case err != nil:
			return err
		case version != c.Version:
			return ErrConflict
		}
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM class_members WHERE class_id = ?`, c.ID).Scan(&members); err != nil {
			return err
		}
		if capacity > 0 && members >= capacity {
			return fmt.Errorf("%w (%d of %d)", ErrFull, members, capacity)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO class_members (`+memberColumns+`) VALUES (?, ?, ?, ?, ?)`,
			m.ID, m.ClassID, m.Name, m.RejoinHash, unixNano(m.Joined))
		if err != nil && isUnique(err) {
			return fmt.Errorf("display name %q: %w", m.Name, ErrExists)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("add member to class %q: %w", c.Name, err)
	}
	return nil
}

// Member returns the member (learner) with the given id.
func (s *DB) Member(ctx context.Context, id string) (Member, error) {
	return s.memberWhere(ctx, "id", id)
}

// MemberByRejoin returns the member whose rejoin code hashes to hash.
func (s *DB) MemberByRejoin(ctx context.Context, hash string) (Member, error) {
	return s.memberWhere(ctx, "rejoin_hash", hash)
}

func (s *DB) memberWhere(ctx context.Context, column, v string) (Member, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+memberColumns+` FROM class_members WHERE `+column+` = ?`, v)
	m, err := scanMember(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Member{}, fmt.Errorf("member: %w", ErrNotFound)
	}
	if err != nil {
		return Member{}, fmt.Errorf("read member: %w", err)
	}
	return m, nil
}

// Members lists a class's members in the order they joined.
func (s *DB) Members(ctx context.Context, classID string) ([]Member, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+memberColumns+` FROM class_members WHERE class_id = ? ORDER BY joined_at, id`, classID)
	if err != nil {
		return nil, fmt.Errorf("list members of class %s: %w", classID, err)
	}
	defer rows.Close()
	var out []Member
	for rows.Next() {
		m, err := scanMember(rows)
		if err != nil {
			return nil, fmt.Errorf("list members of class %s: %w", classID, err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list members of class %s: %w", classID, err)
	}
	return out, nil
}

// CountMembers returns how many learners joined each class, by class id.
func (s *DB) CountMembers(ctx context.Context) (map[string]int, error) {
	return s.countBy(ctx, `SELECT class_id, COUNT(*) FROM class_members GROUP BY class_id`)
}

func scanMember(r scanner) (Member, error) {
	var m Member
	var joined int64
	err := r.Scan(&m.ID, &m.ClassID, &m.Name, &m.RejoinHash, &joined)
	m.Joined = fromNano(joined)
	return m, err
}

// countBy runs a query of (key, count) rows into a map.
func (s *DB) countBy(ctx context.Context, q string, args ...any) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("count: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("count: %w", err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count: %w", err)
	}
	return out, nil
}
