package app

import (
	"testing"

	"oplab.dev/oplab/internal/clusterview"
	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/oplog"
	"oplab.dev/oplab/internal/quiz"
	"oplab.dev/oplab/internal/session"
)

// TestJSONConvention: every view the application layer hands to the
// browser as it is (the web adapter passes it through as JSON, or as a
// live stream's frame data) keeps docs/api.md's convention (see
// jsonconv.Check). The server's own types are checked in internal/server.
//
// The board (app.App.Board) is package board's view, checked there.
func TestJSONConvention(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		// The session's answers: start, status, chaos, reset, stop, and an
		// instructor's reset, end and extend (Status); check; hint.
		session.Status{}, session.CheckResult{}, session.HintResult{},
		// The timeline and progress: an Update's data is an Event, or its
		// Step or Report (the engine's, as it is).
		session.Event{}, session.Step{}, engine.Report{},
		// The catalogue and the session list as the application hands
		// them out (the web adapter maps them to the server's LabEntry
		// and SessionRef today).
		[]session.LabEntry{}, []session.Summary{},
		quiz.View{}, quiz.Outcome{},
		// The live streams' frame data.
		oplog.Entry{}, clusterview.View{},
		// The class board's events.
		ClassEvent{},
		// gofmt's answer to the code panel.
		Formatted{},
	} {
		for _, err := range jsonconv.Check(v) {
			t.Errorf("%T: %v", v, err)
		}
	}
}
