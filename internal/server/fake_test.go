package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"oplab.dev/oplab/internal/board"
)

// The server's tests run against the application layer in memory: one
// fake for each interface the server consumes, each holding its own
// interface's state and no other's:
//
//   - fakeLearning (fakelearning_test.go, fakejoin_test.go,
//     fakequiz_test.go): the labs, the learners' sessions, joining a class
//     and the graded quizzes; scriptedLearning (scripted_test.go) plays
//     one lab over it for the browser tests;
//   - fakeClassroom (fakeclassroom_test.go): the classes and their boards;
//   - fakeSignIns (fakesignins_test.go): the instructors and every
//     sign-in;
//   - fakeConsole (fakeconsole_test.go) and fakeStreams
//     (fakestreams_test.go);
//   - fakeCode (fakecode_test.go): a learner's module, its build and
//     gofmt, for the code panel;
//   - readyFunc (below): Operations.
//
// Where the real layer's parts share a store, fakeApp composes the fakes
// the same way, each asking another through one narrow link.

// fakeApp is the three fakes every server needs, composed: the
// classroom's sessions are the learning's; the class a learner joins is
// the classroom's; a member's sign-in ends when the classroom closes
// their class.
type fakeApp struct {
	learning  *fakeLearning
	classroom *fakeClassroom
	signIns   *fakeSignIns
}

func newFakeApp() *fakeApp {
	room := newFakeClassroom()
	learning := newFakeLearning(room)
	room.sessions = learning
	signIns := newFakeSignIns(func(learner string) bool { return room.isClosed(learning.classOf(learner)) })
	return &fakeApp{learning: learning, classroom: room, signIns: signIns}
}

// config is c with a's fakes as its application layer.
func (a *fakeApp) config(c Config) Config {
	c.Learning, c.Classroom, c.SignIns = a.learning, a.classroom, a.signIns
	return c
}

// classEvent is an event of session id, of class: the session moves to
// state, its cell on the board becomes cell, and the class's watchers
// hear u.
func (a *fakeApp) classEvent(class, id, state string, cell board.Cell, u Update) {
	a.learning.setState(id, state)
	a.classroom.event(class, id, cell, u)
}

// fakeCalls is what a fake was asked to do, for a test to read.
type fakeCalls struct {
	mu   sync.Mutex
	list []string
}

func (c *fakeCalls) record(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list = append(c.list, s)
}

// calls returns the calls recorded so far.
func (c *fakeCalls) calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.list)
}

// forgetCalls clears the record.
func (c *fakeCalls) forgetCalls() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list = nil
}

// fakeWrongCodes is how many wrong codes (or passwords) a client may
// send before it must wait.
const fakeWrongCodes = 3

// fakeTooMany is the refusal of a client past fakeWrongCodes.
func fakeTooMany() *Refusal {
	return &Refusal{Reason: RefusalTooMany, Retry: 6 * time.Second, Err: fmt.Errorf("too many wrong codes: try again in 6s")}
}

// readyFunc is Operations from a function.
type readyFunc func(context.Context) error

func (f readyFunc) Ready(ctx context.Context) error { return f(ctx) }

// serveFake serves c (with a temporary data directory, answering to its
// own address as the local learner's server) on 127.0.0.1 until the test
// ends.
func serveFake(t *testing.T, c Config) (*httptest.Server, *Server) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	c.DataDir, c.Hosts, c.Learner = t.TempDir(), Hosts(ts.Listener.Addr().String()), "local"
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s
	ts.Start()
	t.Cleanup(func() { ts.Close(); s.Close() })
	return ts, s
}
