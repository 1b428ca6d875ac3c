package store

import (
	"encoding/json"
	"errors"
	"time"
)

// Errors a caller can test for with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	// ErrConflict means the record (a session, a class, an instructor)
	// changed since it was read.
	ErrConflict = errors.New("changed concurrently")
	// ErrExists means a record with that id (or name) already exists.
	ErrExists = errors.New("already exists")
)

// Session is a stored session: who, which lab, on which cluster, and where
// it stands. The store does not interpret State; the session package owns
// the state machine.
type Session struct {
	ID       string `json:"id"`
	Learner  string `json:"learner"`
	Lab      string `json:"lab"`
	Cluster  string `json:"cluster"`
	Provider string `json:"provider"`
	State    string `json:"state"`
	// Exercise is the index of the current exercise.
	Exercise int `json:"exercise"`
	// Lang is the learner's language for texts ("en", "ko").
	Lang    string    `json:"lang"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	// Version counts updates; UpdateSession fails with ErrConflict when
	// the stored version is not the one the caller read.
	Version int64 `json:"version"`
	// Seen is when the session's learner last looked at it (MarkSeen);
	// zero when never marked. UpdateSession does not write it.
	Seen time.Time `json:"seen,omitzero"`
	// Data is the session package's working state as JSON (the current
	// attempt at an exercise); the store does not interpret it.
	Data json.RawMessage `json:"data,omitempty"`
}

// Event is one entry of a session's timeline, which is append-only.
type Event struct {
	// Seq orders events; it is assigned by the store and grows.
	Seq       int64     `json:"seq"`
	SessionID string    `json:"sessionId"`
	At        time.Time `json:"at"`
	Kind      string    `json:"kind"`
	// Exercise is the id of the exercise the event belongs to, if any.
	Exercise string `json:"exercise,omitempty"`
	// Message is a one-line summary a person can read.
	Message string `json:"message"`
	// Data is the event's details as JSON (the session package's types).
	Data json.RawMessage `json:"data,omitempty"`
}

// Result is the latest outcome of one graded item of a session: an
// exercise or a quiz. The timeline keeps every attempt; a Result is the one
// that counts.
type Result struct {
	SessionID string `json:"sessionId"`
	Kind      string `json:"kind"` // "exercise" or "quiz"
	Item      string `json:"item"` // exercise or quiz id
	Score     int    `json:"score"`
	Total     int    `json:"total"`
	Passed    bool   `json:"passed"`
	// Recovery is T1 - T0 for an exercise with chaos; zero otherwise.
	Recovery time.Duration   `json:"recoveryNs,omitempty"`
	At       time.Time       `json:"at"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// Result kinds.
const (
	ResultExercise = "exercise"
	ResultQuiz     = "quiz"
)

// Filter selects sessions in Sessions. Zero fields match everything.
type Filter struct {
	Learner string
	Lab     string
	// States, when not empty, keeps only sessions in one of these states.
	States []string
}
