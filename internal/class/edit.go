package class

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Changes are the fields Edit changes; nil fields stay as they are.
type Changes struct {
	Labs      []string
	Capacity  *int
	Opens     *time.Time // the zero time removes the bound
	Closes    *time.Time // the zero time removes the bound
	TimeLimit *time.Duration
	Owner     *string
	// Warm sets the warm sessions of the labs it names (0 removes a lab's);
	// the other labs' stay.
	Warm map[string]int
	// NewCode replaces the join code (the old one stops working; learners
	// who joined stay in).
	NewCode bool
	// Reopen undoes Close.
	Reopen bool
	// Version, when not zero, is the version of the class the changes
	// were made from (an edit form's): if the class changed since, Edit
	// fails with ErrChanged rather than undo the other change.
	Version int64
}

// Edit changes a class. It fails with ErrChanged when the class changed
// since it was read (another instructor's edit at the same moment, or
// since ch.Version): read it again and retry.
func (s *Service) Edit(ctx context.Context, a Actor, name string, ch Changes) (*Class, error) {
	c, err := s.managed(ctx, a, name)
	if err != nil {
		return nil, err
	}
	if ch.Version != 0 && ch.Version != c.Version {
		return nil, fmt.Errorf("class %q %w (now version %d, the edit was made from version %d): read it again",
			name, ErrChanged, c.Version, ch.Version)
	}
	sp := Spec{Name: c.Name, Labs: c.Labs, Capacity: c.Capacity, Opens: c.Opens, Closes: c.Closes, TimeLimit: c.TimeLimit, Owner: c.Owner,
		Warm: maps.Clone(c.Warm)}
	if ch.Labs != nil {
		sp.Labs = ch.Labs
		// A lab the class no longer runs keeps no warm sessions.
		maps.DeleteFunc(sp.Warm, func(id string, _ int) bool { return !slices.Contains(sp.Labs, id) })
	}
	if ch.Warm != nil && sp.Warm == nil {
		sp.Warm = map[string]int{}
	}
	maps.Copy(sp.Warm, ch.Warm)
	set(&sp.Capacity, ch.Capacity)
	set(&sp.Opens, ch.Opens)
	set(&sp.Closes, ch.Closes)
	set(&sp.TimeLimit, ch.TimeLimit)
	set(&sp.Owner, ch.Owner)
	if err := s.checkSpec(ctx, a, sp); err != nil {
		return nil, err
	}
	c.Labs, c.Capacity, c.Opens, c.Closes, c.TimeLimit, c.Owner = sp.Labs, sp.Capacity, sp.Opens.UTC(), sp.Closes.UTC(), sp.TimeLimit, sp.Owner
	c.Warm = warmOf(sp.Warm)
	if ch.NewCode {
		c.JoinCode = newCode(joinCodeLen)
	}
	if ch.Reopen {
		c.Closed = false
	}
	if err := s.o.Store.UpdateClass(ctx, &c); err != nil {
		return nil, s.storeErr(err, name)
	}
	s.log.Info("class edited", "class", c.Name, "by", a.Name, "newCode", ch.NewCode, "reopened", ch.Reopen)
	return s.view(ctx, c)
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
