package webapp

import (
	"context"
	"log/slog"
	"sync"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/lesson"
	"oplab.dev/oplab/internal/metrics"
	"oplab.dev/oplab/internal/server"
)

// Web is an App as the web server uses it: the server's interfaces over
// the App's methods and its Runtime.
type Web struct {
	a      *app.App
	rt     *app.Runtime
	log    *slog.Logger
	render *lesson.Renderer

	mu    sync.Mutex
	views map[string]*server.LabView // by lab and language
}

// Web is each interface the server consumes but Operations (the App's).
var (
	_ server.Learning  = (*Web)(nil)
	_ server.Classroom = (*Web)(nil)
	_ server.SignIns   = (*Web)(nil)
	_ server.Console   = (*Web)(nil)
	_ server.Streams   = (*Web)(nil)
)

// Options are the runtime's (see app.RuntimeOptions).
type Options = app.RuntimeOptions

// New starts a's runtime (App.Serve) and builds the adapter on it; Close
// stops the runtime.
func New(ctx context.Context, a *app.App, o Options) (*Web, error) {
	rt, err := a.Serve(ctx, o)
	if err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Web{a: a, rt: rt, log: log, render: lesson.New(), views: map[string]*server.LabView{}}, nil
}

// Runtime returns the runtime the adapter serves with.
func (w *Web) Runtime() *app.Runtime { return w.rt }

// Metrics returns the registry the runtime records in, for /metrics.
func (w *Web) Metrics() *metrics.Metrics { return w.rt.Metrics() }

// Close stops the runtime.
func (w *Web) Close() error { return w.rt.Close() }

// Console returns w as the server's console, or nil when it has none.
func (w *Web) Console() server.Console {
	if w.rt.Console() == nil {
		return nil
	}
	return w
}
