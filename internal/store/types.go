package store

import (
	"encoding/json"
	"errors"
	"time"
)

// Errors a caller can test for with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	// ErrConflict means the session changed since it was read.
	ErrConflict = errors.New("session changed concurrently")
	// ErrExists means a session with that id already exists.
	ErrExists = errors.New("already exists")
)

// Session is a stored session: who, which lab, on which cluster, and where
// it stands. The store does not interpret State; the session package owns
// the state machine.
type Session struct {
	ID       string
	Learner  string
	Lab      string
	Cluster  string
	Provider string
	State    string
	// Exercise is the index of the current exercise.
	Exercise int
	// Lang is the learner's language for texts ("en", "ko").
	Lang    string
	Created time.Time
	Updated time.Time
	// Version counts updates; Update fails with ErrConflict when the stored
	// version is not the one the caller read.
	Version int64
}

// Event is one entry of a session's timeline, which is append-only.
type Event struct {
	// Seq orders events; it is assigned by the store and grows.
	Seq       int64
	SessionID string
	At        time.Time
	Kind      string
	// Exercise is the id of the exercise the event belongs to, if any.
	Exercise string
	// Message is a one-line summary a person can read.
	Message string
	// Data is the event's details as JSON (the session package's types).
	Data json.RawMessage
}

// Result is the latest outcome of one graded item of a session: an
// exercise or a quiz. The timeline keeps every attempt; a Result is the one
// that counts.
type Result struct {
	SessionID string
	Kind      string // "exercise" or "quiz"
	Item      string // exercise or quiz id
	Score     int
	Total     int
	Passed    bool
	// Recovery is T1 - T0 for an exercise with chaos; zero otherwise.
	Recovery time.Duration
	At       time.Time
	Data     json.RawMessage
}

// Result kinds.
const (
	ResultExercise = "exercise"
	ResultQuiz     = "quiz"
)

// Filter selects sessions in List. Zero fields match everything.
type Filter struct {
	Learner string
	Lab     string
	// States, when not empty, keeps only sessions in one of these states.
	States []string
}
