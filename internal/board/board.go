// Package board is the instructor's board as it crosses from the
// application layer to the browser: the class it is of, a column per
// exercise, a row per member and the machine's room. The application
// layer (app.App.Board) decides every field; the web server renders the
// same value into the board page and /api/classes/:name/board, and
// board.js draws it (docs/api.md lists its keys). Its Class is the one
// view of a class, which the CLI prints too (`oplab class show -o json`).
//
// It is a package of its own, holding nothing but these views, so that
// both may import it: the server may not import the application layer,
// which reaches the store and the clusters (see
// internal/server/imports_test.go). A second copy of the row in the
// server, mapped field by field, is how the row once lost `active`, and
// with it the select box and every button the board has for a learner.
package board

import (
	"time"

	"oplab.dev/oplab/internal/jsonconv"
)

// View is a class as its instructor watches it: a row per member, a
// column per exercise of the class's labs.
type View struct {
	Class   Class     `json:"class"`
	Columns []Column  `json:"columns"`
	Rows    []Row     `json:"rows"`
	At      time.Time `json:"at"`
	// Capacity is the machine's room for clusters; nil when it could not
	// be measured.
	Capacity *Capacity `json:"capacity,omitempty"`
}

// Class is a class as an instructor sees it, in a page (a line of their
// list, the answer to a create or an edit, the head of its board) and in
// `oplab class ... -o json`: the one view of a class.
type Class struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Labs     []string `json:"labs"`
	JoinCode string   `json:"joinCode"`
	Members  int      `json:"members"`
	Capacity int      `json:"capacity"`
	Owner    string   `json:"owner"`
	// State is open, scheduled, ended, closed or full.
	State     string            `json:"state"`
	Opens     time.Time         `json:"opens,omitzero"`
	Closes    time.Time         `json:"closes,omitzero"`
	TimeLimit jsonconv.Duration `json:"timeLimitMs,omitempty"`
	Closed    bool              `json:"closed"`
	// Version changes with every edit (an edit form sends the one it
	// showed).
	Version int64 `json:"version"`
	// Warm is how many sessions of each lab the class keeps started ahead.
	Warm    map[string]int `json:"warm,omitempty"`
	Created time.Time      `json:"created"`
	Updated time.Time      `json:"updated"`
}

// Column is one exercise of one of the class's labs.
type Column struct {
	Lab       string            `json:"lab"`
	Exercise  string            `json:"exercise"`
	Title     string            `json:"title"`
	TimeLimit jsonconv.Duration `json:"timeLimitMs,omitempty"`
}

// Reasons a learner looks stuck (Row.Stuck).
const (
	// StuckFault: the exercise's fault has been in effect longer than the
	// exercise's time limit without a recovery.
	StuckFault = "fault"
	// StuckIdle: a live session with no event for a while (app.IdleAfter).
	StuckIdle = "idle"
)

// What an instructor may do to a member's session from the board
// (Row.Actions). Each is also the last part of its route: POST
// /api/classes/:name/sessions/:id/reset, /extend, /end.
const (
	// Reset puts the current exercise back before its fault (or makes a
	// cluster over its budget anew).
	Reset = "reset"
	// Extend adds time to the session's limit.
	Extend = "extend"
	// End stops the session; its results stay.
	End = "end"
)

// Row is one member: their latest session of the class and their
// outcome on each exercise.
type Row struct {
	Learner string `json:"learner"`
	Name    string `json:"name"`
	// Session is the member's latest session in the class ("" before
	// their first start), with its lab, state and current exercise.
	Session string `json:"session,omitempty"`
	Lab     string `json:"lab,omitempty"`
	State   string `json:"state,omitempty"`
	// Active is whether that session is live (session.State.Active).
	Active   bool   `json:"active,omitempty"`
	Exercise string `json:"exercise,omitempty"`
	// Actions are what the instructor may do to the session now, in the
	// order Reset, Extend, End: none once it ended, and Reset only while
	// the session allows one (its exercise started, or its cluster ran
	// into its budget). The board offers these and no others; the select
	// box for "Extend the selected" comes with Extend.
	Actions []string `json:"actions,omitempty"`
	// T0 is when the current exercise's fault took effect, while it is
	// not recovered.
	T0    time.Time `json:"t0,omitzero"`
	Cells []Cell    `json:"cells"`
	// Passed counts the exercises passed; Hints all hints seen.
	Passed int `json:"passed"`
	Hints  int `json:"hints"`
	// QuizScore of QuizTotal sums the best quiz of each lab taken.
	QuizScore    int       `json:"quizScore"`
	QuizTotal    int       `json:"quizTotal"`
	LastActivity time.Time `json:"lastActivity,omitzero"`
	// Stuck is why the learner looks stuck (StuckFault, StuckIdle), or "".
	Stuck string `json:"stuck,omitempty"`
	// Trouble is the bound of its budget the live session's cluster ran
	// into (session.Trouble's kind: memory, stopped, etcd, disk, tasks),
	// or "".
	Trouble string `json:"trouble,omitempty"`
}

// Cell is a member's outcome on one exercise.
type Cell struct {
	Score    int               `json:"score"`
	Total    int               `json:"total"`
	Passed   bool              `json:"passed"`
	Recovery jsonconv.Duration `json:"recoveryMs,omitempty"`
	Hints    int               `json:"hints"`
	// Current marks the exercise the member's live session is on.
	Current bool `json:"current,omitempty"`
}

// Capacity is what the learners waiting for a cluster see, and why: the
// queue and its estimate, the clusters live and starting (of MaxClusters,
// when capped), what one costs (measured on Measured live clusters;
// assumed when 0) and the machine's free memory and idle cores.
type Capacity struct {
	Queue         int               `json:"queue"`
	Estimate      jsonconv.Duration `json:"estimateMs"`
	Reason        string            `json:"reason,omitempty"`
	Live          int               `json:"live"`
	Starting      int               `json:"starting"`
	MaxClusters   int               `json:"maxClusters,omitempty"`
	ClusterMemory uint64            `json:"clusterMemoryBytes"`
	ClusterCPU    float64           `json:"clusterCpuCores"`
	Measured      int               `json:"measuredClusters"`
	MemAvailable  uint64            `json:"memAvailableBytes"`
	IdleCores     float64           `json:"idleCores"`
	Cores         int               `json:"cores"`
}
