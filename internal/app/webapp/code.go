package webapp

import (
	"context"
	"errors"
	"time"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/controllab"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/session"
)

// Module implements server.Code.
func (w *Web) Module(ctx context.Context, id string) (map[string]string, error) {
	files, err := w.a.Module(ctx, id)
	if err != nil {
		return nil, codeErr(err)
	}
	out := make(map[string]string, len(files))
	for name, b := range files {
		out[name] = string(b)
	}
	return out, nil
}

// Build implements server.Code.
func (w *Web) Build(ctx context.Context, id string, files map[string]string, run bool, p func(server.Update)) (any, error) {
	f, err := moduleFiles(files)
	if err != nil {
		return nil, err
	}
	res, err := w.a.Build(ctx, id, f, run, progress(p))
	if err != nil {
		return nil, codeErr(err)
	}
	return res, nil
}

// Format implements server.Code.
func (w *Web) Format(id string, files map[string]string) (any, error) {
	f, err := moduleFiles(files)
	if err != nil {
		return nil, err
	}
	res, err := w.a.Format(id, f)
	if errors.Is(err, app.ErrFormatTooFast) {
		return nil, &server.Refusal{Reason: server.RefusalTooMany, Retry: time.Second / app.FormatPerSecond, Err: err}
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// moduleFiles are the files a page sent, checked: a module past its
// bounds, or a path outside it, is the request's fault.
func moduleFiles(files map[string]string) (controllab.Files, error) {
	f := make(controllab.Files, len(files))
	for name, s := range files {
		f[name] = []byte(s)
	}
	if err := f.Check(); err != nil {
		return nil, classified{err, server.ErrInvalid}
	}
	return f, nil
}

func codeErr(err error) error {
	if errors.Is(err, session.ErrNoModule) {
		return classified{err, server.ErrConflict}
	}
	return webErr(err)
}
