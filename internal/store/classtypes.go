package store

import (
	"errors"
	"time"
)

// ErrFull means a class has as many members as its capacity allows.
var ErrFull = errors.New("class is full")

// Instructor is a person who runs classes. The store keeps the password
// only as the hash the class package computed.
type Instructor struct {
	Name         string    `json:"name"`
	PasswordHash string    `json:"-"`
	Admin        bool      `json:"admin"`
	Created      time.Time `json:"created"`
	Updated      time.Time `json:"updated"`
	Version      int64     `json:"version"`
}

// Class is a group of learners running the same labs in a time window.
// The store does not interpret its rules (the class package owns them).
// It is a row, not JSON: what a front end sees of a class is a view made
// above the store.
type Class struct {
	ID   string
	Name string
	// Labs are lab ids in the order the class runs them.
	Labs     []string
	JoinCode string
	// Capacity caps the members; zero means no cap.
	Capacity int
	// Opens and Closes bound when learners may join; zero means no bound.
	Opens  time.Time
	Closes time.Time
	// TimeLimit caps each session of the class; zero means none.
	TimeLimit time.Duration
	// Warm is how many sessions of each lab to keep started ahead for
	// the class's members; none when empty.
	Warm map[string]int
	// Owner is the name of the instructor who runs the class.
	Owner   string
	Closed  bool
	Created time.Time
	Updated time.Time
	// Version counts updates; UpdateClass fails with ErrConflict when the
	// stored version is not the one the caller read.
	Version int64
}

// Member is a learner who joined a class. ID is the learner's identity
// (store.Session.Learner of their sessions); RejoinHash is the hash of the
// personal code that lets them back in from another device.
type Member struct {
	ID         string    `json:"id"`
	ClassID    string    `json:"classId"`
	Name       string    `json:"name"`
	RejoinHash string    `json:"-"`
	Joined     time.Time `json:"joined"`
}
