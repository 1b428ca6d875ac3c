package app

import (
	"encoding/json"
	"testing"
	"time"

	"oplab.dev/oplab/internal/clusterview"
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
// The board's rows, columns and cells are here, but not the whole Board:
// its Class and Capacity are the class service's and admission's views,
// which `oplab class ... -o json` prints (in nanoseconds); the browser
// gets the server's Board, built from these.
func TestJSONConvention(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		// The session's answers: start, status, chaos, reset, stop, and an
		// instructor's reset, end and extend (Status); check; hint.
		session.Status{}, session.CheckResult{}, session.HintResult{},
		// The timeline and progress: an Update's data is an Event, or its
		// Step or Report.
		session.Event{}, session.Step{}, session.Report{},
		// The catalogue and the session list as the application hands
		// them out (the web adapter maps them to the server's LabEntry
		// and SessionRef today).
		[]session.LabEntry{}, []session.Summary{},
		quiz.View{}, quiz.Outcome{},
		// The live streams' frame data.
		oplog.Entry{}, clusterview.View{},
		// The class board and its events.
		Column{}, BoardRow{}, Cell{}, ClassEvent{},
	} {
		for _, err := range jsonconv.Check(v) {
			t.Errorf("%T: %v", v, err)
		}
	}
}

// TestBoardJSONInMillis: a board cell's time to recovery and a column's
// time limit are written in whole milliseconds.
func TestBoardJSONInMillis(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"a column", Column{Lab: "failover", Exercise: "delete-primary", Title: "Delete the primary", TimeLimit: 5 * time.Minute},
			`{"lab":"failover","exercise":"delete-primary","title":"Delete the primary","timeLimitMs":300000}`},
		{"a column without a limit", Column{Lab: "rbac", Exercise: "verbs"},
			`{"lab":"rbac","exercise":"verbs","title":""}`},
		{"a cell recovered", Cell{Score: 3, Total: 3, Passed: true, Recovery: 4012 * time.Millisecond, Hints: 1},
			`{"score":3,"total":3,"passed":true,"hints":1,"recoveryMs":4012}`},
		{"a cell not recovered", Cell{Total: 3, Current: true},
			`{"score":0,"total":3,"passed":false,"hints":0,"current":true}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
}
