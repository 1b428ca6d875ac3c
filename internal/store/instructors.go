package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

const instructorColumns = `name, password_hash, admin, created_at, updated_at, version`

// CreateInstructor stores a new instructor (Version 1); ErrExists when the
// name is taken.
func (s *DB) CreateInstructor(ctx context.Context, in *Instructor) error {
	if in.Name == "" || in.PasswordHash == "" {
		return errors.New("create instructor: a name and a password hash are required")
	}
	now := time.Now().UTC()
	in.Created, in.Updated, in.Version = now, now, 1
	_, err := s.db.ExecContext(ctx, `INSERT INTO instructors (`+instructorColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
		in.Name, in.PasswordHash, in.Admin, unixNano(in.Created), unixNano(in.Updated), in.Version)
	if err != nil {
		if isUnique(err) {
			return fmt.Errorf("create instructor %q: %w", in.Name, ErrExists)
		}
		return fmt.Errorf("create instructor %q: %w", in.Name, err)
	}
	return nil
}

// UpdateInstructor stores in's password hash and admin flag if the stored
// version is still in.Version, then bumps in.Version; ErrConflict
// otherwise.
func (s *DB) UpdateInstructor(ctx context.Context, in *Instructor) error {
	updated := time.Now().UTC()
	err := s.tx(ctx, func(tx conn) error {
		res, err := tx.ExecContext(ctx, `UPDATE instructors SET password_hash = ?, admin = ?, updated_at = ?, version = version + 1
			WHERE name = ? AND version = ?`, in.PasswordHash, in.Admin, unixNano(updated), in.Name, in.Version)
		if err != nil {
			return err
		}
		return versionChecked(ctx, tx, res, `SELECT version FROM instructors WHERE name = ?`, in.Name)
	})
	if err != nil {
		return fmt.Errorf("update instructor %q: %w", in.Name, err)
	}
	in.Version++
	in.Updated = updated
	return nil
}

// Instructor returns the instructor with the given name.
func (s *DB) Instructor(ctx context.Context, name string) (Instructor, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+instructorColumns+` FROM instructors WHERE name = ?`, name)
	in, err := scanInstructor(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Instructor{}, fmt.Errorf("instructor %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return Instructor{}, fmt.Errorf("read instructor %q: %w", name, err)
	}
	return in, nil
}

// Instructors lists every instructor by name.
func (s *DB) Instructors(ctx context.Context) ([]Instructor, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+instructorColumns+` FROM instructors ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list instructors: %w", err)
	}
	defer rows.Close()
	var out []Instructor
	for rows.Next() {
		in, err := scanInstructor(rows)
		if err != nil {
			return nil, fmt.Errorf("list instructors: %w", err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list instructors: %w", err)
	}
	return out, nil
}

func scanInstructor(r scanner) (Instructor, error) {
	var in Instructor
	var created, updated int64
	err := r.Scan(&in.Name, &in.PasswordHash, &in.Admin, &created, &updated, &in.Version)
	in.Created, in.Updated = fromNano(created), fromNano(updated)
	return in, err
}

// versionChecked turns an UPDATE ... WHERE version = ? that changed no row
// into ErrNotFound or ErrConflict, reading the current version with q.
func versionChecked(ctx context.Context, tx conn, res sql.Result, q string, key string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	var v int64
	err = tx.QueryRowContext(ctx, q, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	return ErrConflict
}
