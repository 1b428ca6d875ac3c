package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// EndedByInstructor is the reason recorded when an instructor ends a
// learner's session.
const EndedByInstructor = "ended by the instructor"

// ClassSession returns the status of session id if it runs in class
// name, which actor manages; a session of another class, or of none, is
// session.ErrNotFound, so an instructor learns nothing of it.
func (a *App) ClassSession(ctx context.Context, actor class.Actor, name, id string) (*session.Status, error) {
	c, err := a.classes.Get(ctx, actor, name)
	if err != nil {
		return nil, err
	}
	cid, err := a.store.SessionClass(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && cid != c.ID {
		return nil, fmt.Errorf("class %q has no session %q: %w", name, id, session.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	return a.sessions.Status(ctx, id)
}

// ResetLearner resets the current exercise of a session of class name.
func (a *App) ResetLearner(ctx context.Context, actor class.Actor, name, id string, progress session.Progress) (*session.Status, error) {
	if _, err := a.ClassSession(ctx, actor, name, id); err != nil {
		return nil, err
	}
	return a.sessions.Reset(ctx, id, progress)
}

// EndLearner stops a session of class name, recording that its
// instructor ended it.
func (a *App) EndLearner(ctx context.Context, actor class.Actor, name, id string, progress session.Progress) (*session.Status, error) {
	if _, err := a.ClassSession(ctx, actor, name, id); err != nil {
		return nil, err
	}
	return a.sessions.Stop(ctx, id, EndedByInstructor, progress)
}

// ExtendLearner adds by to the time limit of a session of class name,
// recording on its timeline who gave the time.
func (a *App) ExtendLearner(ctx context.Context, actor class.Actor, name, id string, by time.Duration, progress session.Progress) (*session.Status, error) {
	if _, err := a.ClassSession(ctx, actor, name, id); err != nil {
		return nil, err
	}
	who := "an administrator"
	if actor.Name != "" {
		who = "instructor " + actor.Name
	}
	return a.sessions.Extend(ctx, id, by, "given by "+who, progress)
}

// ClassEvent is an event of one of a class's sessions.
type ClassEvent struct {
	Session  string    `json:"session"`
	Learner  string    `json:"learner"`
	Seq      int64     `json:"seq"`
	Kind     string    `json:"kind"`
	Exercise string    `json:"exercise,omitempty"`
	Message  string    `json:"message"`
	At       time.Time `json:"at"`
}

// classEventsBatch caps the events read per poll.
const classEventsBatch = 500

// WatchClass sends the events of class name's sessions recorded from now
// on, polling the store every interval (about a second suits a
// dashboard), until ctx ends; the channel then closes. A class's sessions
// are read again on each poll, so a learner's new session is watched too.
func (a *App) WatchClass(ctx context.Context, actor class.Actor, name string, every time.Duration) (<-chan ClassEvent, error) {
	c, err := a.classes.Get(ctx, actor, name)
	if err != nil {
		return nil, err
	}
	after, err := a.store.LastEventSeq(ctx)
	if err != nil {
		return nil, err
	}
	out := make(chan ClassEvent, 64)
	go func() {
		defer close(out)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			evs, err := a.classEventsAfter(ctx, c.ID, &after)
			if err != nil {
				continue // the next poll tries again; the board's own fetch says what is wrong
			}
			for _, ev := range evs {
				select {
				case out <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// classEventsAfter reads the events after *after of every session and
// keeps those of class classID's, moving *after past all it read.
func (a *App) classEventsAfter(ctx context.Context, classID string, after *int64) ([]ClassEvent, error) {
	evs, err := a.store.EventsAfter(ctx, *after, classEventsBatch)
	if err != nil || len(evs) == 0 {
		return nil, err
	}
	sessions, err := a.store.ClassSessions(ctx, classID)
	if err != nil {
		return nil, err
	}
	learners := make(map[string]string, len(sessions))
	for _, s := range sessions {
		learners[s.ID] = s.Learner
	}
	var out []ClassEvent
	for _, ev := range evs {
		*after = ev.Seq
		if l, ok := learners[ev.SessionID]; ok {
			out = append(out, ClassEvent{Session: ev.SessionID, Learner: l, Seq: ev.Seq, Kind: ev.Kind,
				Exercise: ev.Exercise, Message: ev.Message, At: ev.At})
		}
	}
	return out, nil
}
