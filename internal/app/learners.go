package app

import (
	"context"
	"errors"
	"slices"

	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/session"
)

// The policy for a learner who joined a class, decided here once for
// every front end: what they see and what they may start. A learner in no
// class (LocalLearner) sees and starts every lab.

// Catalogue lists the labs learner may run, with where they stand in
// each: a class member's are their class's labs, in the class's order;
// anyone else's, every lab of the course.
func (a *App) Catalogue(ctx context.Context, learner string, lang locale.Lang) ([]session.LabEntry, error) {
	labs, err := a.sessions.Catalogue(ctx, learner, lang)
	if err != nil {
		return nil, err
	}
	j, err := a.classes.Membership(ctx, learner)
	if errors.Is(err, class.ErrNotFound) {
		return labs, nil
	}
	if err != nil {
		return nil, err
	}
	return only(labs, j.Labs), nil
}

// only returns the entries of labs named by ids, in the order of ids.
func only(labs []session.LabEntry, ids []string) []session.LabEntry {
	out := make([]session.LabEntry, 0, len(ids))
	for _, id := range ids {
		if i := slices.IndexFunc(labs, func(e session.LabEntry) bool { return e.ID == id }); i >= 0 {
			out = append(out, labs[i])
		}
	}
	return out
}

// Start starts a session of o.Lab for o.Learner. A class member's class
// admits the start first (it is open, and runs that lab: else one of
// class's errors, ErrClosed, ErrNotOpen, ErrEnded or ErrNotInClass), and
// the session is linked to the class as soon as it is recorded, so the
// class's results and export see it even if the start fails midway.
//
// A member of a class that keeps warm sessions of the lab takes one of
// its class's (see ClassPools).
//
// A start that needs a new cluster waits for room on the machine first
// (see Admission), in a queue whose place progress hears; a start that
// takes a warm session does not wait.
func (a *App) Start(ctx context.Context, o session.StartOptions, progress session.Progress) (*session.Status, error) {
	if o.Admit == nil {
		o.Admit = a.admitWait
	}
	adm, err := a.classes.Admit(ctx, o.Learner, o.Lab)
	if errors.Is(err, class.ErrNotFound) {
		return a.sessions.Start(ctx, o, progress)
	}
	if err != nil {
		return nil, err
	}
	o.TimeLimit = adm.TimeLimit.Duration()
	if adm.Warm > 0 {
		o.Pool = ClassPool(adm.ClassID) // else the server's pool, if any
	}
	created := o.Created
	o.Created = func(ctx context.Context, id string) error {
		if err := a.classes.Link(ctx, id, adm); err != nil {
			return err
		}
		if created != nil {
			return created(ctx, id)
		}
		return nil
	}
	return a.sessions.Start(ctx, o, progress)
}
