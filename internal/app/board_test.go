package app

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/board"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// classroom is an App with two instructors, each running a class of the
// failover lab, and two members in ada's class.
type classroom struct {
	a            *App
	ada, bob     class.Actor
	alice, carol *class.Joined
	classID      string
}

func newClassroom(t testing.TB) *classroom {
	t.Helper()
	ctx := t.Context()
	a, err := Open(ctx, Config{DataDir: t.TempDir(), BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	for _, n := range []string{"ada", "bob"} {
		// A hash straight into the store: argon2id is tested in internal/class.
		if err := a.store.CreateInstructor(ctx, &store.Instructor{Name: n, PasswordHash: "$argon2id$unused"}); err != nil {
			t.Fatal(err)
		}
	}
	cr := &classroom{a: a, ada: class.Actor{Name: "ada"}, bob: class.Actor{Name: "bob"}}
	c, err := a.classes.Create(ctx, cr.ada, class.Spec{Name: "morning", Labs: []string{"failover"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.classes.Create(ctx, cr.bob, class.Spec{Name: "evening", Labs: []string{"failover"}}); err != nil {
		t.Fatal(err)
	}
	cr.classID = c.ID
	if cr.alice, err = a.classes.Join(ctx, "10.0.0.1", c.JoinCode, "Alice"); err != nil {
		t.Fatal(err)
	}
	if cr.carol, err = a.classes.Join(ctx, "10.0.0.2", c.JoinCode, "Carol"); err != nil {
		t.Fatal(err)
	}
	return cr
}

// seed records a session of the class as the session package would have:
// its record (with the working state data), its link to the class, its
// events and results.
func (cr *classroom) seed(t testing.TB, s *store.Session, data any, evs []*store.Event, rs ...*store.Result) {
	t.Helper()
	ctx := t.Context()
	b, _ := json.Marshal(data)
	s.Data, s.Provider, s.Lang, s.Cluster = b, Embedded, "en", "c-"+s.ID
	if err := cr.a.store.CreateSession(ctx, s, &store.Event{Kind: session.KindState, Message: "provisioning", At: s.Created}); err != nil {
		t.Fatal(err)
	}
	if err := cr.a.store.LinkSession(ctx, s.ID, cr.classID); err != nil {
		t.Fatal(err)
	}
	if err := cr.a.store.AppendEvents(ctx, s.ID, evs...); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		r.SessionID = s.ID
		if err := cr.a.store.PutResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}

func raw(v any) json.RawMessage { b, _ := json.Marshal(v); return b }

// TestBoard: the board shows each member's latest session, their
// outcome per exercise, hints and quiz, who is stuck and what the
// instructor may do: alice's fault has been live past the exercise's 5
// minute limit (her exercise can be reset); carol passed the first
// exercise but has done nothing for 11 minutes (her next one has not
// started: no reset).
func TestBoard(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cr := newClassroom(t)
	now := time.Now().UTC()
	t0 := now.Add(-6 * time.Minute)
	cr.seed(t, &store.Session{ID: "failover-a", Learner: cr.alice.Learner, Lab: "failover", State: string(session.InExercise), Created: now.Add(-8 * time.Minute)},
		map[string]any{"attempt": map[string]any{"lab": "failover", "exercise": "delete-primary", "started": t0, "t0": t0}},
		[]*store.Event{
			{Kind: session.KindChaos, Exercise: "delete-primary", Message: "primary deleted", At: t0, Data: raw(session.ChaosData{T0: t0})},
			{Kind: session.KindHint, Exercise: "delete-primary", Message: "hint 1", At: now.Add(-time.Minute), Data: raw(session.HintData{Index: 0})},
			{Kind: session.KindHint, Exercise: "delete-primary", Message: "hint 2", At: now.Add(-30 * time.Second), Data: raw(session.HintData{Index: 1})},
		})
	idle := now.Add(-11 * time.Minute)
	cr.seed(t, &store.Session{ID: "failover-c", Learner: cr.carol.Learner, Lab: "failover", State: string(session.Ready), Exercise: 1, Created: now.Add(-20 * time.Minute)},
		map[string]any{},
		[]*store.Event{{Kind: session.KindCheck, Exercise: "delete-primary", Message: "passed", At: idle}},
		&store.Result{Kind: store.ResultExercise, Item: "delete-primary", Score: 5, Total: 5, Passed: true, Recovery: 1200 * time.Millisecond, At: idle},
		&store.Result{Kind: store.ResultQuiz, Item: "failover", Score: 3, Total: 4, At: idle})

	b, err := cr.a.Board(ctx, cr.ada, "morning", locale.En)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Columns) < 2 || b.Columns[0].Exercise != "delete-primary" || b.Columns[0].TimeLimit.Duration() != 5*time.Minute || b.Columns[0].Title == "" {
		t.Fatalf("columns: got %+v, want the failover lab's exercises, delete-primary first with its 5m limit", b.Columns)
	}
	if len(b.Rows) != 2 {
		t.Fatalf("rows: got %d, want 2", len(b.Rows))
	}
	// The machine as admission measures it: the two seeded live sessions,
	// no cluster process to measure (so the assumed cost), /proc's memory.
	if c := b.Capacity; c == nil || c.Live != 2 || c.Queue != 0 || c.Measured != 0 || c.ClusterMemory == 0 || c.MemAvailable == 0 {
		t.Errorf("capacity: got %+v, want 2 live, none queued, the assumed cost and the machine's free memory", c)
	}
	alice, carol := b.Rows[0], b.Rows[1]
	for _, tc := range []struct {
		what      string
		got, want any
	}{
		{"alice's name", alice.Name, "Alice"},
		{"alice's session", alice.Session, "failover-a"},
		{"alice's state", alice.State, string(session.InExercise)},
		{"alice's exercise", alice.Exercise, "delete-primary"},
		{"alice's fault since", alice.T0.Equal(t0), true},
		{"alice's hints", alice.Hints, 2},
		{"alice's current cell", alice.Cells[0].Current, true},
		{"alice's passed", alice.Passed, 0},
		{"alice stuck", alice.Stuck, board.StuckFault},
		{"alice live", alice.Active, true},
		{"alice's actions", strings.Join(alice.Actions, " "), "reset extend end"},
		{"alice's last activity", alice.LastActivity.Equal(now.Add(-30 * time.Second)), true},
		{"carol's exercise", carol.Exercise, b.Columns[1].Exercise},
		{"carol's first cell", carol.Cells[0], board.Cell{Score: 5, Total: 5, Passed: true, Recovery: jsonconv.Duration(1200 * time.Millisecond)}},
		{"carol's passed", carol.Passed, 1},
		{"carol's quiz", [2]int{carol.QuizScore, carol.QuizTotal}, [2]int{3, 4}},
		{"carol stuck", carol.Stuck, board.StuckIdle},
		// Her exercise has not started: nothing to reset.
		{"carol's actions", strings.Join(carol.Actions, " "), "extend end"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.what, tc.got, tc.want)
		}
	}

	// Bob runs another class: he sees neither the board nor a session.
	if _, err := cr.a.Board(ctx, cr.bob, "morning", locale.En); !errors.Is(err, class.ErrForbidden) {
		t.Errorf("bob's board of ada's class: got %v, want ErrForbidden", err)
	}
	if _, err := cr.a.ClassSession(ctx, cr.bob, "evening", "failover-a"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("ada's learner's session through bob's class: got %v, want ErrNotFound", err)
	}
	if _, err := cr.a.EndLearner(ctx, cr.bob, "morning", "failover-a", nil); !errors.Is(err, class.ErrForbidden) {
		t.Errorf("bob ends ada's learner's session: got %v, want ErrForbidden", err)
	}
	if st, err := cr.a.ClassSession(ctx, class.Actor{Name: "root", Admin: true}, "morning", "failover-a"); err != nil || st.Learner != cr.alice.Learner {
		t.Errorf("an admin's view of alice's session: got %v, %v", st, err)
	}
}

// TestWatchClass: the watcher sends the events of the class's sessions
// recorded after it started, and none of another class's.
func TestWatchClass(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	cr := newClassroom(t)
	cr.seed(t, &store.Session{ID: "failover-a", Learner: cr.alice.Learner, Lab: "failover", State: string(session.Ready)}, map[string]any{}, nil)
	if err := cr.a.store.CreateSession(ctx, &store.Session{ID: "other", Learner: "x", Lab: "failover", State: "ready", Provider: Embedded},
		&store.Event{Kind: session.KindState, Message: "outside"}); err != nil {
		t.Fatal(err)
	}
	evs, err := cr.a.WatchClass(ctx, cr.ada, "morning", 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := cr.a.store.AppendEvents(ctx, "other", &store.Event{Kind: session.KindHint, Message: "not ours"}); err != nil {
		t.Fatal(err)
	}
	if err := cr.a.store.AppendEvents(ctx, "failover-a", &store.Event{Kind: session.KindHint, Message: "ours"}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-evs:
		if ev.Session != "failover-a" || ev.Message != "ours" || ev.Learner != cr.alice.Learner {
			t.Errorf("first event: got %+v, want alice's hint", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	if _, err := cr.a.WatchClass(ctx, cr.bob, "morning", time.Second); !errors.Is(err, class.ErrForbidden) {
		t.Errorf("bob watches ada's class: got %v, want ErrForbidden", err)
	}
}

// TestBoardReadsNoTimeline: a member's row costs the board the same after
// their timeline grew by thousands of long refused console lines as
// before, and still shows their newest activity. Not parallel: it counts
// the process's allocations.
func TestBoardReadsNoTimeline(t *testing.T) {
	ctx := t.Context()
	cr := newClassroom(t)
	now := time.Now().UTC()
	cr.seed(t, &store.Session{ID: "failover-a", Learner: cr.alice.Learner, Lab: "failover", State: string(session.Ready), Created: now.Add(-time.Hour)},
		map[string]any{}, nil)
	board := func() {
		if _, err := cr.a.Board(ctx, cr.ada, "morning", locale.En); err != nil {
			t.Fatal(err)
		}
	}
	before := testing.AllocsPerRun(5, board)

	const lines = 3000
	long := strings.Repeat("x", 64<<10)
	last := now.Add(-time.Minute)
	evs := make([]*store.Event, lines)
	for i := range evs {
		evs[i] = &store.Event{Kind: session.KindConsole, Message: "$ " + long, At: last.Add(time.Duration(i-lines) * time.Millisecond),
			Data: raw(session.ConsoleData{Line: long, ExitCode: -1, Refused: "unknown command " + long})}
	}
	evs[lines-1].At = last
	if err := cr.a.store.AppendEvents(ctx, "failover-a", evs...); err != nil {
		t.Fatal(err)
	}
	after := testing.AllocsPerRun(5, board)
	if after-before > 200 {
		t.Errorf("allocations of a board: %.0f with a short timeline, %.0f after %d more events; want the same, give or take 200", before, after, lines)
	}
	b, err := cr.a.Board(ctx, cr.ada, "morning", locale.En)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Rows[0].LastActivity; !got.Equal(last) {
		t.Errorf("alice's last activity: got %v, want her newest event's %v", got, last)
	}
	t.Logf("allocations of a board: %.0f, after %d events %.0f", before, lines, after)
}
