package board

import (
	"encoding/json"
	"testing"
	"time"

	"oplab.dev/oplab/internal/jsonconv"
)

// TestJSONConvention: the board and the class it heads, as the browser
// reads them, keep docs/api.md's convention (see jsonconv.Check).
func TestJSONConvention(t *testing.T) {
	t.Parallel()
	for _, v := range []any{View{}, []Class{}} {
		for _, err := range jsonconv.Check(v) {
			t.Errorf("%T: %v", v, err)
		}
	}
}

// TestJSON: the board's durations reach the browser as whole milliseconds
// under their ...Ms keys, a row's fault as t0, and a live row says so and
// what may be done to it.
func TestJSON(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 4, 9, 30, 0, 0, time.UTC)
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"a class", Class{Name: "morning", TimeLimit: jsonconv.Duration(45 * time.Minute)},
			`{"id":"","name":"morning","labs":null,"joinCode":"","members":0,"capacity":0,"owner":"","state":"","timeLimitMs":2700000,"closed":false,"version":0,"created":"0001-01-01T00:00:00Z","updated":"0001-01-01T00:00:00Z"}`},
		{"a class without a limit", Class{Name: "evening"},
			`{"id":"","name":"evening","labs":null,"joinCode":"","members":0,"capacity":0,"owner":"","state":"","closed":false,"version":0,"created":"0001-01-01T00:00:00Z","updated":"0001-01-01T00:00:00Z"}`},
		{"a column", Column{Lab: "failover", Exercise: "delete-primary", Title: "Delete the primary", TimeLimit: jsonconv.Duration(5 * time.Minute)},
			`{"lab":"failover","exercise":"delete-primary","title":"Delete the primary","timeLimitMs":300000}`},
		{"a column without a limit", Column{Lab: "rbac", Exercise: "verbs"},
			`{"lab":"rbac","exercise":"verbs","title":""}`},
		{"a cell recovered", Cell{Score: 3, Total: 3, Passed: true, Recovery: jsonconv.Duration(1234567 * time.Microsecond), Hints: 1},
			`{"score":3,"total":3,"passed":true,"recoveryMs":1235,"hints":1}`},
		{"a cell not recovered", Cell{Total: 3, Current: true},
			`{"score":0,"total":3,"passed":false,"hints":0,"current":true}`},
		{"a live row at fault, over its budget", Row{Learner: "l", Name: "Grace", Session: "s-1", State: "in-exercise", Active: true,
			Actions: []string{Reset, Extend, End}, T0: t0, Cells: []Cell{{}}, Stuck: StuckFault, Trouble: "memory"},
			`{"learner":"l","name":"Grace","session":"s-1","state":"in-exercise","active":true,"actions":["reset","extend","end"],` +
				`"t0":"2026-03-04T09:30:00Z","cells":[{"score":0,"total":0,"passed":false,"hints":0}],"passed":0,"hints":0,"quizScore":0,"quizTotal":0,` +
				`"stuck":"fault","trouble":"memory"}`},
		{"a row not started", Row{Learner: "l", Name: "Linus", Cells: []Cell{}},
			`{"learner":"l","name":"Linus","cells":[],"passed":0,"hints":0,"quizScore":0,"quizTotal":0}`},
		{"the capacity", Capacity{Queue: 2, Estimate: jsonconv.Duration(95 * time.Second)},
			`{"queue":2,"estimateMs":95000,"live":0,"starting":0,"clusterMemoryBytes":0,"clusterCpuCores":0,"measuredClusters":0,"memAvailableBytes":0,"idleCores":0,"cores":0}`},
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
