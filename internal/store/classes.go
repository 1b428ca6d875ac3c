package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

const classColumns = `id, name, labs, join_code, capacity, opens_at, closes_at, time_limit_ns, owner, closed, created_at, updated_at, version, warm`

// CreateClass stores a new class (Version 1). A taken name or join code is
// ErrExists (the error says which); an unknown owner is ErrNotFound.
func (s *DB) CreateClass(ctx context.Context, c *Class) error {
	if c.ID == "" || c.Name == "" || c.JoinCode == "" || c.Owner == "" {
		return errors.New("create class: an id, a name, a join code and an owner are required")
	}
	now := time.Now().UTC()
	c.Created, c.Updated, c.Version = now, now, 1
	labs, err := json.Marshal(nonNil(c.Labs))
	if err != nil {
		return fmt.Errorf("create class %q: %w", c.Name, err)
	}
	warm, err := warmJSON(c.Warm)
	if err != nil {
		return fmt.Errorf("create class %q: %w", c.Name, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO classes (`+classColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Name, string(labs), c.JoinCode, c.Capacity, unixNano(c.Opens), unixNano(c.Closes), int64(c.TimeLimit),
		c.Owner, c.Closed, unixNano(c.Created), unixNano(c.Updated), c.Version, warm)
	switch {
	case err == nil:
		return nil
	case isUniqueOn(err, "classes", "name"):
		return fmt.Errorf("create class %q: name: %w", c.Name, ErrExists)
	case isUniqueOn(err, "classes", "join_code"):
		return fmt.Errorf("create class %q: join code: %w", c.Name, ErrExists)
	case isUnique(err):
		return fmt.Errorf("create class %q: %w", c.Name, ErrExists)
	case isForeignKey(err):
		return fmt.Errorf("create class %q: owner %q: %w", c.Name, c.Owner, ErrNotFound)
	}
	return fmt.Errorf("create class %q: %w", c.Name, err)
}

// UpdateClass stores c's fields (all but ID and Created) if the stored
// version is still c.Version, then bumps c.Version; ErrConflict otherwise.
func (s *DB) UpdateClass(ctx context.Context, c *Class) error {
	labs, err := json.Marshal(nonNil(c.Labs))
	if err != nil {
		return fmt.Errorf("update class %q: %w", c.Name, err)
	}
	warm, err := warmJSON(c.Warm)
	if err != nil {
		return fmt.Errorf("update class %q: %w", c.Name, err)
	}
	updated := time.Now().UTC()
	err = s.tx(ctx, func(tx conn) error {
		res, err := tx.ExecContext(ctx, `UPDATE classes SET name = ?, labs = ?, join_code = ?, capacity = ?, opens_at = ?, closes_at = ?,
			time_limit_ns = ?, owner = ?, closed = ?, updated_at = ?, warm = ?, version = version + 1 WHERE id = ? AND version = ?`,
			c.Name, string(labs), c.JoinCode, c.Capacity, unixNano(c.Opens), unixNano(c.Closes), int64(c.TimeLimit),
			c.Owner, c.Closed, unixNano(updated), warm, c.ID, c.Version)
		if err != nil {
			if isUnique(err) {
				return ErrExists
			}
			if isForeignKey(err) {
				return fmt.Errorf("owner %q: %w", c.Owner, ErrNotFound)
			}
			return err
		}
		return versionChecked(ctx, tx, res, `SELECT version FROM classes WHERE id = ?`, c.ID)
	})
	if err != nil {
		return fmt.Errorf("update class %q: %w", c.Name, err)
	}
	c.Version++
	c.Updated = updated
	return nil
}

// Class returns the class with the given id.
func (s *DB) Class(ctx context.Context, id string) (Class, error) {
	return s.classWhere(ctx, "id", id)
}

// ClassByName returns the class with the given name.
func (s *DB) ClassByName(ctx context.Context, name string) (Class, error) {
	return s.classWhere(ctx, "name", name)
}

// ClassByCode returns the class whose join code is code.
func (s *DB) ClassByCode(ctx context.Context, code string) (Class, error) {
	return s.classWhere(ctx, "join_code", code)
}

// classWhere reads the one class whose column (a unique one, never user
// input) equals v.
func (s *DB) classWhere(ctx context.Context, column, v string) (Class, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+classColumns+` FROM classes WHERE `+column+` = ?`, v)
	c, err := scanClass(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Class{}, fmt.Errorf("class: %w", ErrNotFound)
	}
	if err != nil {
		return Class{}, fmt.Errorf("read class: %w", err)
	}
	return c, nil
}

// Classes lists the classes of owner (every class when owner is empty),
// newest first.
func (s *DB) Classes(ctx context.Context, owner string) ([]Class, error) {
	q, args := `SELECT `+classColumns+` FROM classes`, []any{}
	if owner != "" {
		q, args = q+` WHERE owner = ?`, append(args, owner)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY created_at DESC, name`, args...)
	if err != nil {
		return nil, fmt.Errorf("list classes: %w", err)
	}
	defer rows.Close()
	var out []Class
	for rows.Next() {
		c, err := scanClass(rows)
		if err != nil {
			return nil, fmt.Errorf("list classes: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list classes: %w", err)
	}
	return out, nil
}

func scanClass(r scanner) (Class, error) {
	var c Class
	var labs, warm string
	var opens, closes, limit, created, updated int64
	err := r.Scan(&c.ID, &c.Name, &labs, &c.JoinCode, &c.Capacity, &opens, &closes, &limit, &c.Owner, &c.Closed, &created, &updated, &c.Version, &warm)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal([]byte(labs), &c.Labs); err != nil {
		return c, fmt.Errorf("class %q: decode labs: %w", c.Name, err)
	}
	if err := json.Unmarshal([]byte(warm), &c.Warm); err != nil {
		return c, fmt.Errorf("class %q: decode warm sessions: %w", c.Name, err)
	}
	if len(c.Warm) == 0 {
		c.Warm = nil // {} and none read alike
	}
	c.Opens, c.Closes, c.TimeLimit = fromNano(opens), fromNano(closes), time.Duration(limit)
	c.Created, c.Updated = fromNano(created), fromNano(updated)
	return c, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// warmJSON encodes a class's warm sessions per lab; none is {}.
func warmJSON(w map[string]int) (string, error) {
	if w == nil {
		w = map[string]int{}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return "", fmt.Errorf("encode warm sessions: %w", err)
	}
	return string(b), nil
}
