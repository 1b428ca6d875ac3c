package cli

import (
	"context"
	"fmt"

	"oplab.dev/oplab/internal/app"
)

// classes opens the application layer for the class commands; closeFn
// releases it.
func (g *globals) classes(ctx context.Context) (a *app.App, closeFn func(), err error) {
	a, err = g.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	return a, func() { a.Close() }, nil
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
