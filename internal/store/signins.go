package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// SignIn is a recorded sign-in of a learner or an instructor. ID is the
// hash of the secret its cookie carries: the store never holds the
// secret itself.
type SignIn struct {
	ID string `json:"-"`
	// Learner is the learner signed in, or Instructor the instructor;
	// exactly one is set.
	Learner    string `json:"learner,omitempty"`
	Instructor string `json:"instructor,omitempty"`
	// ClassID is the class the learner was a member of when signing in;
	// empty for a learner in no class.
	ClassID string    `json:"classId,omitempty"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// SignInState is a sign-in with what decides whether it still holds:
// whether its learner is still a member of its class and that class
// open, and whether its instructor still exists and is an admin.
type SignInState struct {
	SignIn
	Member      bool
	ClassClosed bool
	Instructor  bool
	Admin       bool
}

const signInColumns = `id, learner, instructor, class_id, created_at, expires_at`

// CreateSignIn records si, first forgetting expired sign-ins and, beyond
// the keep newest, older sign-ins of the same learner or instructor, so
// the table stays bounded however often someone signs in.
func (s *DB) CreateSignIn(ctx context.Context, si *SignIn, keep int) error {
	if si.ID == "" || (si.Learner == "") == (si.Instructor == "") || si.Expires.IsZero() {
		return errors.New("create sign-in: an id, a learner or an instructor, and an expiry are required")
	}
	if si.Created.IsZero() {
		si.Created = time.Now().UTC()
	}
	column, who := "learner", si.Learner
	if si.Instructor != "" {
		column, who = "instructor", si.Instructor
	}
	err := s.tx(ctx, func(tx conn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sign_ins WHERE expires_at < ?`, unixNano(si.Created)); err != nil {
			return err
		}
		// column is one of two names above, never input. The newest
		// keep-1 stay, and si makes keep (NOT IN rather than SQLite's
		// LIMIT -1 OFFSET, which PostgreSQL does not take).
		if _, err := tx.ExecContext(ctx, `DELETE FROM sign_ins WHERE `+column+` = ? AND id NOT IN (SELECT id FROM sign_ins
			WHERE `+column+` = ? ORDER BY created_at DESC LIMIT ?)`, who, who, max(keep-1, 0)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sign_ins (`+signInColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			si.ID, si.Learner, si.Instructor, si.ClassID, unixNano(si.Created), unixNano(si.Expires))
		return err
	})
	if err != nil {
		return fmt.Errorf("record sign-in: %w", err)
	}
	return nil
}

// SignInState reads sign-in id with its member, class and instructor, in
// one indexed read: it runs on every signed-in request.
func (s *DB) SignInState(ctx context.Context, id string) (SignInState, error) {
	var st SignInState
	var created, expires int64
	err := s.db.QueryRowContext(ctx, `SELECT s.id, s.learner, s.instructor, s.class_id, s.created_at, s.expires_at,
			m.id IS NOT NULL, COALESCE(c.closed, 0), i.name IS NOT NULL, COALESCE(i.admin, 0)
		FROM sign_ins s
		LEFT JOIN class_members m ON s.class_id != '' AND m.id = s.learner AND m.class_id = s.class_id
		LEFT JOIN classes c ON s.class_id != '' AND c.id = s.class_id
		LEFT JOIN instructors i ON s.instructor != '' AND i.name = s.instructor
		WHERE s.id = ?`, id).Scan(&st.ID, &st.Learner, &st.SignIn.Instructor, &st.ClassID, &created, &expires,
		&st.Member, &st.ClassClosed, &st.Instructor, &st.Admin)
	if errors.Is(err, sql.ErrNoRows) {
		return st, fmt.Errorf("sign-in: %w", ErrNotFound)
	}
	if err != nil {
		return st, fmt.Errorf("read sign-in: %w", err)
	}
	st.Created, st.Expires = fromNano(created), fromNano(expires)
	return st, nil
}

// DeleteSignIn forgets sign-in id (a sign-out); forgetting one that is
// not there is no error.
func (s *DB) DeleteSignIn(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM sign_ins WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete sign-in: %w", err)
	}
	return nil
}

// DeleteClassSignIns forgets the sign-ins of a class's learners and
// returns how many there were.
func (s *DB) DeleteClassSignIns(ctx context.Context, classID string) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM sign_ins WHERE class_id = ?`, classID)
	if err != nil {
		return 0, fmt.Errorf("delete sign-ins of class %s: %w", classID, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// DeleteInstructor removes an instructor and their sign-ins in one
// transaction. An instructor who still owns classes is ErrConflict: a
// class needs an owner.
func (s *DB) DeleteInstructor(ctx context.Context, name string) error {
	err := s.tx(ctx, func(tx conn) error {
		var owned int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM classes WHERE owner = ?`, name).Scan(&owned); err != nil {
			return err
		}
		if owned > 0 {
			return fmt.Errorf("%w: owns %d classes", ErrConflict, owned)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sign_ins WHERE instructor = ?`, name); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM instructors WHERE name = ?`, name)
		if err != nil {
			if isForeignKey(err) { // a class given to them since the count
				return fmt.Errorf("%w: owns a class", ErrConflict)
			}
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete instructor %q: %w", name, err)
	}
	return nil
}
