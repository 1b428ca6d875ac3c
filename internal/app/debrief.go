package app

import (
	"context"
	"errors"
	"os"
	"time"

	"oplab.dev/oplab/internal/oplog"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// Sources of a Debrief's operator log.
const (
	// LogLive: read from the session's cluster, which is still there.
	LogLive = "live"
	// LogRecorded: kept when the session's cluster was deleted.
	LogRecorded = "recorded"
)

// What a Debrief carries, whatever the length of the session's history:
// the newest events and log lines, each line cut to what the replay draws.
const (
	// MaxDebriefEvents bounds the timeline events a Debrief carries.
	MaxDebriefEvents = 1000
	// MaxDebriefLog bounds the operator log lines a Debrief carries.
	MaxDebriefLog = 5000
	// MaxDebriefLogText bounds, in bytes, each text (message, error,
	// object) of a log line in a Debrief.
	MaxDebriefLogText = 512
)

// Debrief is the record of a session laid on one time axis, to replay it
// afterwards: its timeline (console commands, chaos, checks with their
// results, hints, states) and the operator's log.
type Debrief struct {
	Session string
	Lab     string
	State   session.State
	// Start and End bound the axis: the session's creation (or its
	// first event or log line, when earlier) and its last event or log
	// line, or now while it runs.
	Start, End time.Time
	// Events are the newest of the timeline (MaxDebriefEvents), oldest
	// first; EventsDropped counts the older ones left out.
	Events        []session.Event
	EventsDropped int
	// Log holds the newest lines of the operator's log (MaxDebriefLog),
	// with their time, level, object, message and error, each cut to
	// MaxDebriefLogText.
	Log []oplog.Entry
	// LogSource is LogLive, LogRecorded, or empty when no log is known
	// (the cluster is gone and nothing was kept).
	LogSource string
	// LogDropped counts the older log lines left out (MaxDebriefLog).
	LogDropped int
}

// Debrief returns session id's record for a debrief; an unknown id is
// session.ErrNotFound. Callers check who may see it.
func (a *App) Debrief(ctx context.Context, id string) (*Debrief, error) {
	st, err := a.sessions.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	evs, dropped, err := a.sessions.TimelineEnd(ctx, id, MaxDebriefEvents)
	if err != nil {
		return nil, err
	}
	d := &Debrief{Session: id, Lab: st.Lab, State: st.State, Start: st.Created, End: st.Updated, Events: evs, EventsDropped: dropped}
	src, from, err := a.operatorLog(ctx, st)
	if err == nil {
		d.LogSource = from
		d.Log, d.LogDropped, err = readEntries(ctx, src, MaxDebriefLog)
	}
	if err != nil && !errors.Is(err, ErrNoLog) {
		return nil, err
	}
	if n := len(evs); n > 0 {
		if evs[0].At.Before(d.Start) {
			d.Start = evs[0].At
		}
		if evs[n-1].At.After(d.End) {
			d.End = evs[n-1].At
		}
	}
	if st.State.Active() {
		d.End = time.Now().UTC()
	}
	if n := len(d.Log); n > 0 {
		if first := d.Log[0].Time; !first.IsZero() && first.Before(d.Start) {
			d.Start = first
		}
		if last := d.Log[n-1].Time; last.After(d.End) {
			d.End = last
		}
	}
	return d, nil
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// readEntries reads the log src and returns its newest max entries, each
// cut to what the replay draws (debriefEntry), and how many older ones
// were left out.
func readEntries(ctx context.Context, src oplog.Source, max int) ([]oplog.Entry, int, error) {
	var out []oplog.Entry
	dropped := 0
	err := src.Lines(ctx, false, func(l oplog.Line) error {
		out = append(out, debriefEntry(oplog.ParseEntry(l)))
		if len(out) >= 2*max {
			dropped += len(out) - max
			out = append(out[:0], out[len(out)-max:]...)
		}
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) { // an operator that has written nothing yet
		return nil, 0, err
	}
	if len(out) > max {
		dropped += len(out) - max
		out = out[len(out)-max:]
	}
	return out, dropped, nil
}

// debriefEntry keeps of e what a replay draws: its time, level, object,
// message and error, each cut to MaxDebriefLogText.
func debriefEntry(e oplog.Entry) oplog.Entry {
	return oplog.Entry{Time: e.Time, Stream: e.Stream, Level: e.Level,
		Object: store.Cut(e.Object, MaxDebriefLogText), Message: store.Cut(e.Message, MaxDebriefLogText), Error: store.Cut(e.Error, MaxDebriefLogText)}
}
