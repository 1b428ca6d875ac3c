package webapp

import (
	"context"
	"fmt"
	"time"

	"oplab.dev/oplab/internal/board"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/server"
)

// CreateClass makes a class from the dashboard's form, as `oplab class
// create` does from its flags.
func (w *Web) CreateClass(ctx context.Context, in server.Instructor, f server.ClassForm) (*board.Class, error) {
	if err := w.classesServed(); err != nil {
		return nil, err
	}
	cf, err := classForm(f)
	if err != nil {
		return nil, err
	}
	sp, err := cf.Spec()
	if err != nil {
		return nil, classErr(err)
	}
	c, err := w.a.CreateClass(ctx, actor(in), sp)
	if err != nil {
		return nil, classErr(err)
	}
	w.ClassesChanged() // its warm pool starts filling now
	return c, nil
}

// EditClass changes a class to the dashboard's edit form, as `oplab class
// edit` does from its flags; the form's version guards against undoing
// another edit.
func (w *Web) EditClass(ctx context.Context, in server.Instructor, name string, f server.ClassForm) (*board.Class, error) {
	cf, err := classForm(f)
	if err != nil {
		return nil, err
	}
	ch, err := cf.Changes()
	if err != nil {
		return nil, classErr(err)
	}
	ch.NewCode, ch.Reopen, ch.Version = f.NewCode, f.Reopen, f.Version
	c, err := w.a.EditClass(ctx, actor(in), name, ch)
	if err != nil {
		return nil, classErr(err)
	}
	w.ClassesChanged()
	return c, nil
}

// classForm is f for the class service, its times read in the browser's
// time zone.
func classForm(f server.ClassForm) (class.Form, error) {
	cf := class.Form{Name: f.Name, Labs: f.Labs, Capacity: f.Capacity, Opens: f.Opens, Closes: f.Closes, TimeLimit: f.TimeLimit, Warm: f.Warm}
	if f.Zone != "" {
		z, err := time.LoadLocation(f.Zone)
		if err != nil {
			return cf, classified{fmt.Errorf("time zone %q: %w", f.Zone, err), server.ErrInvalid}
		}
		cf.Zone = z
	}
	return cf, nil
}
