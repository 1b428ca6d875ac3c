package server

import (
	"context"
	"fmt"
	"strings"
)

// Joining, as fakeLearning plays it: a class is found by its join code
// in the classroom (fakeClassroom.byCode), the learners it lets in are
// learner-1, learner-2 … with rejoin codes RJ001-SECRET, RJ002-SECRET …,
// and a client that sent fakeWrongCodes wrong codes waits.

func (f *fakeLearning) Join(_ context.Context, client, code, name string) (*Member, error) {
	f.record("join " + code + " " + name)
	c, known := f.classes.byCode(code)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.wrong[client] >= fakeWrongCodes {
		return nil, fakeTooMany()
	}
	switch {
	case !known:
		f.wrong[client]++
		return nil, &Refusal{Reason: RefusalBadCode, Err: fmt.Errorf("unknown code: check the code and try again")}
	case strings.TrimSpace(name) == "":
		return nil, &Refusal{Reason: RefusalBadName, Err: fmt.Errorf("invalid display name: it is empty")}
	case c.closed:
		return nil, &Refusal{Reason: RefusalClosed, Err: fmt.Errorf("class %s: the class is closed", c.name)}
	case c.full:
		return nil, &Refusal{Reason: RefusalFull, Err: fmt.Errorf("class %s: the class is full", c.name)}
	}
	for _, m := range f.members {
		if m.Class == c.name && m.Name == name {
			return nil, &Refusal{Reason: RefusalNameTaken, Err: fmt.Errorf("already exists: the name %q is taken", name)}
		}
	}
	n := len(f.members) + 1
	m := Member{Learner: fmt.Sprintf("learner-%d", n), Name: name, Class: c.name}
	f.members[m.Learner] = m
	m.RejoinCode = fmt.Sprintf("RJ%03d-SECRET", n)
	f.rejoins[m.RejoinCode] = m.Learner
	return &m, nil
}

func (f *fakeLearning) Rejoin(_ context.Context, client, code string) (*Member, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.wrong[client] >= fakeWrongCodes {
		return nil, fakeTooMany()
	}
	learner, ok := f.rejoins[strings.ToUpper(strings.TrimSpace(code))]
	if !ok {
		f.wrong[client]++
		return nil, &Refusal{Reason: RefusalBadCode, Err: fmt.Errorf("unknown code: check the code and try again")}
	}
	m := f.members[learner]
	return &m, nil
}

// classOf is the class learner joined, "" for a learner in none.
func (f *fakeLearning) classOf(learner string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.members[learner].Class
}
