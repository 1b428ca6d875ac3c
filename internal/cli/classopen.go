package cli

import (
	"context"
	"fmt"

	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/store"
)

// classes opens the store in the data directory and returns the class
// service on it; closeFn releases the store. It opens the store the way
// sessions does, so both can move to one composition root together.
func (g *globals) classes(ctx context.Context) (svc *class.Service, closeFn func(), err error) {
	st, err := store.OpenDir(ctx, g.dataDir)
	if err != nil {
		return nil, nil, err
	}
	svc, err = class.New(class.Options{Store: st, Labs: course.Embedded().Labs, Logger: g.logger()})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return svc, func() { st.Close() }, nil
}

// outputFlag is the -o flag of commands that print text or JSON.
type outputFlag string

func (o *outputFlag) json() (bool, error) {
	switch *o {
	case "":
		return false, nil
	case "json":
		return true, nil
	}
	return false, fmt.Errorf("unknown output format %q: use json, or leave it out for text", string(*o))
}
