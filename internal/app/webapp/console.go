package webapp

import (
	"context"
	"errors"
	"io"
	"time"

	"oplab.dev/oplab/internal/console"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/metrics"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/session"
)

// Run runs a console line against the session's own cluster with the
// session's kubeconfig, the only credentials the command sees, counted
// among its learner's commands: over the console's caps it is refused
// (console.ErrTooMany) like any refused line.
func (w *Web) Run(ctx context.Context, id, line, stdin string, out io.Writer) error {
	t, err := w.a.ConsoleTarget(ctx, id)
	if err != nil {
		return webErr(err)
	}
	began := time.Now()
	res, err := w.rt.Console().Run(ctx, console.Request{Target: t, Line: line, Stdin: []byte(stdin),
		Output: func(c console.Chunk) { _, _ = out.Write(c.Data) }})
	// A line over its learner's rate is the flood itself: refused, and
	// not kept.
	if !errors.Is(err, console.ErrTooFast) {
		w.record(ctx, id, line, res, err, time.Since(began))
	}
	switch {
	case errors.Is(err, console.ErrRefused):
		w.rt.Metrics().ConsoleCommand(metrics.ConsoleRefused)
		w.rt.Metrics().Refused(metrics.RefusedConsole)
	case err == nil && res.ExitCode == 0:
		w.rt.Metrics().ConsoleCommand(metrics.ConsoleOK)
	case res != nil:
		w.rt.Metrics().ConsoleCommand(metrics.ConsoleFailed)
	}
	return err
}

// Complete completes a console line from the session's cluster.
func (w *Web) Complete(ctx context.Context, id, line string) (server.Completion, error) {
	t, err := w.a.ConsoleTarget(ctx, id)
	if err != nil {
		return server.Completion{}, webErr(err)
	}
	c, err := w.rt.Console().Completer(t).Complete(ctx, line)
	return server.Completion{From: c.From, Candidates: c.Candidates}, err
}

// record puts the command on the session's timeline (the learner's
// activity, and the instructor's replay), where RecordConsole masks its
// secrets; a failure to record does not fail the command.
func (w *Web) record(ctx context.Context, id, line string, res *console.Result, err error, took time.Duration) {
	d := session.ConsoleData{Line: line, ExitCode: -1, Duration: jsonconv.Millis(took)}
	var refused *console.RefusedError
	switch {
	case errors.As(err, &refused):
		d.Refused = refused.Msg
	case res != nil:
		d.ExitCode = res.ExitCode
	}
	if rerr := w.a.RecordConsole(context.WithoutCancel(ctx), id, d); rerr != nil {
		w.log.Warn("record a console command", "session", id, "err", rerr)
	}
}
