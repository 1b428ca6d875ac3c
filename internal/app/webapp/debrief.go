package webapp

import (
	"context"

	"oplab.dev/oplab/internal/server"
)

// Debrief is the session's record on one time axis (see app.App.Debrief).
func (w *Web) Debrief(ctx context.Context, id string) (*server.Debrief, error) {
	d, err := w.a.Debrief(ctx, id)
	if err != nil {
		return nil, webErr(err)
	}
	out := &server.Debrief{Session: d.Session, Lab: d.Lab, State: string(d.State), Start: d.Start, End: d.End,
		LogSource: d.LogSource, LogDropped: d.LogDropped, EventsDropped: d.EventsDropped,
		Events: make([]server.Update, 0, len(d.Events)), Log: make([]server.LogLine, 0, len(d.Log))}
	for _, ev := range d.Events {
		u := toUpdate(ev)
		u.Session = id
		out.Events = append(out.Events, u)
	}
	for _, e := range d.Log {
		out.Log = append(out.Log, server.LogLine{Time: e.Time, Level: e.Level, Object: e.Object, Message: e.Message, Error: e.Error})
	}
	return out, nil
}
