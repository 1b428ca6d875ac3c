package class

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/jsonconv"
	"oplab.dev/oplab/internal/store"
)

// clock is a settable time for the rules that depend on it.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

var monday9 = time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)

type fixture struct {
	svc   *Service
	store *store.DB
	clock *clock
	path  string
}

// newFixture opens a service on a real SQLite file with the built-in labs,
// and instructors ada and bob (not admins).
func newFixture(t testing.TB, o Options) *fixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), store.FileName)
	st, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := &clock{t: monday9}
	o.Store, o.Labs, o.Now = st, course.Embedded().Labs, clk.now
	svc, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{svc: svc, store: st, clock: clk, path: path}
	for _, name := range []string{"ada", "bob"} {
		// The store is given hashes directly: argon2id is tested once
		// on its own, and costs 64 MiB a hash.
		if err := st.CreateInstructor(t.Context(), &store.Instructor{Name: name, PasswordHash: "$argon2id$unused"}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) create(t *testing.T, a Actor, sp Spec) *Class {
	t.Helper()
	if sp.Labs == nil {
		sp.Labs = []string{"failover", "rbac"}
	}
	c, err := f.svc.Create(t.Context(), a, sp)
	if err != nil {
		t.Fatalf("create class %s: %v", sp.Name, err)
	}
	return c
}

var ada = Actor{Name: "ada"}

func TestCreate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	c := f.create(t, ada, Spec{Name: "morning", Capacity: 30, Opens: monday9, Closes: monday9.Add(8 * time.Hour), TimeLimit: 90 * time.Minute})
	if c.Owner != "ada" || c.State != StateOpen || c.Members != 0 || len(c.JoinCode) != joinCodeLen+1 {
		t.Errorf("created: got %+v, want owner ada, open, no members, a code like ABCDE-FGHJK", c)
	}
	stored, err := f.store.ClassByName(t.Context(), "morning")
	if err != nil || stored.JoinCode != normalizeCode(c.JoinCode) {
		t.Errorf("stored code: got %q, %v; want %q", stored.JoinCode, err, normalizeCode(c.JoinCode))
	}
	tests := []struct {
		name string
		a    Actor
		sp   Spec
		want error
	}{
		{"taken name", ada, Spec{Name: "morning", Labs: []string{"rbac"}}, ErrExists},
		{"bad name", ada, Spec{Name: "a b", Labs: []string{"rbac"}}, ErrInvalid},
		{"no labs", ada, Spec{Name: "x"}, ErrInvalid},
		{"unknown lab", ada, Spec{Name: "x", Labs: []string{"rbac", "nope"}}, ErrInvalid},
		{"lab twice", ada, Spec{Name: "x", Labs: []string{"rbac", "rbac"}}, ErrInvalid},
		{"negative capacity", ada, Spec{Name: "x", Labs: []string{"rbac"}, Capacity: -1}, ErrInvalid},
		{"negative time limit", ada, Spec{Name: "x", Labs: []string{"rbac"}, TimeLimit: -time.Minute}, ErrInvalid},
		{"closes before it opens", ada, Spec{Name: "x", Labs: []string{"rbac"}, Opens: monday9, Closes: monday9.Add(-time.Hour)}, ErrInvalid},
		{"unknown owner", LocalAdmin(), Spec{Name: "x", Labs: []string{"rbac"}, Owner: "eve"}, ErrInvalid},
		{"admin without owner", LocalAdmin(), Spec{Name: "x", Labs: []string{"rbac"}}, ErrInvalid},
		{"given to another", ada, Spec{Name: "x", Labs: []string{"rbac"}, Owner: "bob"}, ErrForbidden},
		{"warm sessions of a lab not run", ada, Spec{Name: "x", Labs: []string{"rbac"}, Warm: map[string]int{"failover": 1}}, ErrInvalid},
		{"negative warm sessions", ada, Spec{Name: "x", Labs: []string{"rbac"}, Warm: map[string]int{"rbac": -1}}, ErrInvalid},
		{"more warm sessions than learners", ada, Spec{Name: "x", Labs: []string{"rbac"}, Capacity: 2, Warm: map[string]int{"rbac": 3}}, ErrInvalid},
		{"more warm sessions than any class", ada, Spec{Name: "x", Labs: []string{"rbac"}, Warm: map[string]int{"rbac": MaxWarm + 1}}, ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := f.svc.Create(t.Context(), tt.a, tt.sp); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
	if c, err := f.svc.Create(t.Context(), LocalAdmin(), Spec{Name: "bobs", Labs: []string{"rbac"}, Owner: "bob"}); err != nil || c.Owner != "bob" {
		t.Errorf("admin creates a class for bob: got %+v, %v", c, err)
	}
}

func TestJoinRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := t.Context()
	open := f.create(t, ada, Spec{Name: "open", Capacity: 2})
	later := f.create(t, ada, Spec{Name: "later", Opens: monday9.Add(time.Hour)})
	over := f.create(t, ada, Spec{Name: "over", Opens: monday9.Add(-2 * time.Hour), Closes: monday9})
	closed := f.create(t, ada, Spec{Name: "closed"})
	if _, err := f.svc.Close(ctx, ada, "closed"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, code, display string
		want                error
	}{
		{"first learner", open.JoinCode, "Alice", nil},
		{"name taken", open.JoinCode, "  alice ", ErrExists},
		{"code typed loosely", " " + normalizeCode(open.JoinCode)[:5] + " " + lower(normalizeCode(open.JoinCode)[5:]), "Bob", nil},
		{"full", open.JoinCode, "Carol", ErrFull},
		{"not open yet", later.JoinCode, "Dan", ErrNotOpen},
		{"past its closing time", over.JoinCode, "Erin", ErrEnded},
		{"closed", closed.JoinCode, "Frank", ErrClosed},
		{"wrong code", "ABCDE-FGHJK", "Gina", ErrBadCode},
		{"empty code", "", "Gina", ErrBadCode},
		{"empty name", open.JoinCode, "  ", ErrInvalid},
		{"unprintable name", open.JoinCode, "a\x07b", ErrInvalid},
	}
	for _, tt := range tests {
		j, err := f.svc.Join(ctx, "10.0.0.1", tt.code, tt.display)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
			continue
		}
		if err == nil && (j.Learner == "" || j.RejoinCode == "" || j.Class != "open" || j.Name != tt.display) {
			t.Errorf("%s: got %+v, want a learner id, a rejoin code, class open, name %q", tt.name, j, tt.display)
		}
	}
	// The clock moves: the scheduled class opens, and admits.
	f.clock.add(time.Hour)
	if _, err := f.svc.Join(ctx, "10.0.0.1", later.JoinCode, "Dan"); err != nil {
		t.Errorf("join once the class opened: %v", err)
	}
	if got, _ := f.svc.Get(ctx, ada, "open"); got.Members != 2 || got.State != StateFull {
		t.Errorf("open class: got %d members, state %s; want 2, full", got.Members, got.State)
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

func TestRejoin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := t.Context()
	c := f.create(t, ada, Spec{Name: "morning", Capacity: 1})
	j, err := f.svc.Join(ctx, "10.0.0.1", c.JoinCode, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	// From another device, with the code typed in lower case without
	// dashes; the class being full does not keep a member out.
	again, err := f.svc.Rejoin(ctx, "10.0.0.2", lower(normalizeCode(j.RejoinCode)))
	if err != nil {
		t.Fatal(err)
	}
	if again.Learner != j.Learner || again.Name != "Alice" || again.RejoinCode != "" {
		t.Errorf("rejoin: got %+v, want learner %s, Alice, and no code shown again", again, j.Learner)
	}
	if _, err := f.svc.Rejoin(ctx, "10.0.0.2", c.JoinCode); !errors.Is(err, ErrBadCode) {
		t.Errorf("rejoin with the class's code: got %v, want ErrBadCode", err)
	}
	if _, err := f.svc.Close(ctx, ada, "morning"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Rejoin(ctx, "10.0.0.2", j.RejoinCode); !errors.Is(err, ErrClosed) {
		t.Errorf("rejoin a closed class: got %v, want ErrClosed", err)
	}
	m, err := f.store.Member(ctx, j.Learner)
	if err != nil || m.RejoinHash != hashRejoin(j.RejoinCode) {
		t.Errorf("stored member: got %+v, %v; want the hash of the rejoin code", m, err)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{FailureBurst: 3, FailureEvery: time.Minute})
	ctx := t.Context()
	c := f.create(t, ada, Spec{Name: "morning"})
	for i := range 3 {
		if _, err := f.svc.Join(ctx, "attacker", "WRONG-CODE"+string(rune('A'+i)), "x"); !errors.Is(err, ErrBadCode) {
			t.Fatalf("wrong code %d: got %v, want ErrBadCode", i, err)
		}
	}
	// Out of attempts: even the right code is refused, so the answer
	// tells nothing; rejoin shares the allowance.
	_, err := f.svc.Join(ctx, "attacker", c.JoinCode, "x")
	var wait *WaitError
	if !errors.Is(err, ErrTooManyAttempts) || !errors.As(err, &wait) || wait.Wait != time.Minute {
		t.Errorf("right code after 3 wrong ones: got %v, want ErrTooManyAttempts with a wait of 1m", err)
	}
	if _, err := f.svc.Rejoin(ctx, "attacker", "AAAA-BBBB-CCCC"); !errors.Is(err, ErrTooManyAttempts) {
		t.Errorf("rejoin after 3 wrong codes: got %v, want ErrTooManyAttempts", err)
	}
	if _, err := f.svc.Join(ctx, "neighbour", c.JoinCode, "Nina"); err != nil {
		t.Errorf("another client: got %v, want it admitted", err)
	}
	f.clock.add(time.Minute)
	if _, err := f.svc.Join(ctx, "attacker", c.JoinCode, "Alice"); err != nil {
		t.Errorf("a minute later: got %v, want one more attempt", err)
	}
	// Right codes cost nothing: the client has one attempt again after
	// its success, not zero.
	if _, err := f.svc.Join(ctx, "attacker", "WRONG", "x"); !errors.Is(err, ErrBadCode) {
		t.Errorf("attempt after a success: got %v, want ErrBadCode", err)
	}
	if _, err := f.svc.Join(ctx, "attacker", "WRONG", "x"); !errors.Is(err, ErrTooManyAttempts) {
		t.Errorf("second wrong code within the minute: got %v, want ErrTooManyAttempts", err)
	}
}

func TestIsolation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := t.Context()
	bob := Actor{Name: "bob"}
	f.create(t, ada, Spec{Name: "adas"})
	f.create(t, bob, Spec{Name: "bobs"})
	capacity := 5
	calls := map[string]func(Actor) error{
		"get":     func(a Actor) error { _, err := f.svc.Get(ctx, a, "adas"); return err },
		"members": func(a Actor) error { _, err := f.svc.Members(ctx, a, "adas"); return err },
		"results": func(a Actor) error { _, err := f.svc.Results(ctx, a, "adas"); return err },
		"edit":    func(a Actor) error { _, err := f.svc.Edit(ctx, a, "adas", Changes{Capacity: &capacity}); return err },
		"close":   func(a Actor) error { _, err := f.svc.Close(ctx, a, "adas"); return err },
	}
	for name, call := range calls {
		if err := call(bob); !errors.Is(err, ErrForbidden) {
			t.Errorf("bob %s ada's class: got %v, want ErrForbidden", name, err)
		}
		if err := call(Actor{}); !errors.Is(err, ErrForbidden) {
			t.Errorf("nobody %s ada's class: got %v, want ErrForbidden", name, err)
		}
	}
	if got, _ := f.svc.Get(ctx, ada, "adas"); got.Closed || got.Capacity != 0 {
		t.Errorf("ada's class after bob's attempts: got %+v, want it unchanged", got)
	}
	for name, call := range calls {
		if err := call(Actor{Name: "root", Admin: true}); err != nil {
			t.Errorf("admin %s ada's class: %v", name, err)
		}
	}
	for _, tt := range []struct {
		a    Actor
		want []string
	}{{ada, []string{"adas"}}, {bob, []string{"bobs"}}, {LocalAdmin(), []string{"bobs", "adas"}}} {
		cs, err := f.svc.List(ctx, tt.a)
		var names []string
		for _, c := range cs {
			names = append(names, c.Name)
		}
		if err != nil || len(names) != len(tt.want) || names[0] != tt.want[0] && names[len(names)-1] != tt.want[0] {
			t.Errorf("classes of %+v: got %v, %v; want %v", tt.a, names, err, tt.want)
		}
	}
	if _, err := f.svc.List(ctx, Actor{}); !errors.Is(err, ErrForbidden) {
		t.Errorf("list with no instructor: got %v, want ErrForbidden", err)
	}
}

func TestEdit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := t.Context()
	c := f.create(t, ada, Spec{Name: "morning", Capacity: 1})
	if _, err := f.svc.Join(ctx, "a", c.JoinCode, "Alice"); err != nil {
		t.Fatal(err)
	}
	capacity, closes, limit := 2, monday9.Add(time.Hour), 45*time.Minute
	got, err := f.svc.Edit(ctx, ada, "morning", Changes{Labs: []string{"rbac"}, Capacity: &capacity, Closes: &closes, TimeLimit: &limit, NewCode: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Capacity != 2 || !got.Closes.Equal(closes) || got.TimeLimit != limit || len(got.Labs) != 1 || got.JoinCode == c.JoinCode || got.Version != 2 {
		t.Errorf("edited: got %+v, want capacity 2, closes %v, limit %v, labs [rbac], a new code, version 2", got, closes, limit)
	}
	if _, err := f.svc.Join(ctx, "b", c.JoinCode, "Bob"); !errors.Is(err, ErrBadCode) {
		t.Errorf("join with the replaced code: got %v, want ErrBadCode", err)
	}
	if _, err := f.svc.Join(ctx, "b", got.JoinCode, "Bob"); err != nil {
		t.Errorf("join with the new code: %v", err)
	}
	bad := monday9.Add(-time.Hour)
	if _, err := f.svc.Edit(ctx, ada, "morning", Changes{Closes: &bad, Opens: &monday9}); !errors.Is(err, ErrInvalid) {
		t.Errorf("edit to close before opening: got %v, want ErrInvalid", err)
	}
	if _, err := f.svc.Close(ctx, ada, "morning"); err != nil {
		t.Fatal(err)
	}
	got, err = f.svc.Edit(ctx, ada, "morning", Changes{Reopen: true})
	if err != nil || got.Closed || got.State != StateFull {
		t.Errorf("reopened: got %+v, %v; want not closed, full", got, err)
	}
	if _, err := f.svc.Edit(ctx, ada, "ghost", Changes{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("edit of an unknown class: got %v, want ErrNotFound", err)
	}
}

func TestAdmitAndLink(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := t.Context()
	c := f.create(t, ada, Spec{Name: "morning", Labs: []string{"failover"}, TimeLimit: time.Hour})
	j, err := f.svc.Join(ctx, "a", c.JoinCode, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Admit(ctx, j.Learner, "rbac"); !errors.Is(err, ErrNotInClass) {
		t.Errorf("admit to a lab the class does not run: got %v, want ErrNotInClass", err)
	}
	if _, err := f.svc.Admit(ctx, "learner-stranger", "failover"); !errors.Is(err, ErrNotFound) {
		t.Errorf("admit an unknown learner: got %v, want ErrNotFound", err)
	}
	adm, err := f.svc.Admit(ctx, j.Learner, "failover")
	if err != nil || adm.ClassID != c.ID || adm.TimeLimit.Duration() != time.Hour {
		t.Fatalf("admit: got %+v, %v; want class %s, limit 1h", adm, err, c.ID)
	}
	sess := &store.Session{ID: "s1", Learner: j.Learner, Lab: "failover", Cluster: "c1", Provider: "embedded", State: "ready"}
	if err := f.store.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Link(ctx, "s1", adm); err != nil {
		t.Fatal(err)
	}
	if id, err := f.store.SessionClass(ctx, "s1"); err != nil || id != c.ID {
		t.Errorf("class of the session: got %q, %v; want %s", id, err, c.ID)
	}
	if _, err := f.svc.Close(ctx, ada, "morning"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Admit(ctx, j.Learner, "failover"); !errors.Is(err, ErrClosed) {
		t.Errorf("admit in a closed class: got %v, want ErrClosed", err)
	}
}

// TestMembership: a member's class is found from their learner id, with
// its labs in the class's order; the local learner is in no class.
func TestMembership(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := t.Context()
	c := f.create(t, ada, Spec{Name: "morning", Labs: []string{"rbac", "failover"}})
	j, err := f.svc.Join(ctx, "a", c.JoinCode, "Alice")
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.Membership(ctx, j.Learner)
	if err != nil {
		t.Fatal(err)
	}
	if got.ClassID != c.ID || got.Name != "Alice" || fmt.Sprint(got.Labs) != "[rbac failover]" || got.RejoinCode != "" {
		t.Errorf("membership: got %+v, want class %s, Alice, labs [rbac failover], no rejoin code", got, c.ID)
	}
	if _, err := f.svc.Membership(ctx, "local"); !errors.Is(err, ErrNotFound) {
		t.Errorf("membership of the local learner: got %v, want ErrNotFound", err)
	}
}

// TestJoinAtNine has 35 learners join a class of 30 at the same moment:
// exactly 30 get in, the others are told the class is full.
func TestJoinAtNine(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	c := f.create(t, ada, Spec{Name: "nine", Capacity: 30})
	errs := make([]error, 35)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = f.svc.Join(t.Context(), "school-nat", c.JoinCode, fmt.Sprint("learner ", i))
		})
	}
	wg.Wait()
	in, full := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			in++
		case errors.Is(err, ErrFull):
			full++
		default:
			t.Errorf("join: %v", err)
		}
	}
	if got, _ := f.svc.Get(t.Context(), ada, "nine"); in != 30 || full != 5 || got.Members != 30 {
		t.Errorf("35 joins to a class of 30: got %d in, %d full, %d members; want 30, 5, 30", in, full, got.Members)
	}
}

// TestWarm: a class's warm sessions per lab are set at creation, changed
// lab by lab (0 removes one), and dropped with a lab the class stops
// running.
func TestWarm(t *testing.T) {
	t.Parallel()
	f := newFixture(t, Options{})
	ctx := t.Context()
	c := f.create(t, ada, Spec{Name: "morning", Capacity: 30, Warm: map[string]int{"failover": 3, "rbac": 0}})
	if want := map[string]int{"failover": 3}; !maps.Equal(c.Warm, want) {
		t.Errorf("created: got %v, want %v", c.Warm, want)
	}
	for _, tc := range []struct {
		name string
		ch   Changes
		want map[string]int
	}{
		{"add a lab's", Changes{Warm: map[string]int{"rbac": 2}}, map[string]int{"failover": 3, "rbac": 2}},
		{"change one, keep the other", Changes{Warm: map[string]int{"failover": 1}}, map[string]int{"failover": 1, "rbac": 2}},
		{"remove one", Changes{Warm: map[string]int{"rbac": 0}}, map[string]int{"failover": 1}},
		{"other changes keep them", Changes{NewCode: true}, map[string]int{"failover": 1}},
		{"a lab dropped drops its warm sessions", Changes{Labs: []string{"rbac"}}, nil},
	} {
		got, err := f.svc.Edit(ctx, ada, "morning", tc.ch)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !maps.Equal(got.Warm, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got.Warm, tc.want)
		}
	}
	if _, err := f.svc.Edit(ctx, ada, "morning", Changes{Warm: map[string]int{"failover": 1}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("warm sessions of a lab no longer run: got %v, want ErrInvalid", err)
	}
}

func TestParseWarm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   map[string]string
		want map[string]int
		err  bool
	}{
		{map[string]string{"failover": "3", "rbac": ""}, map[string]int{"failover": 3, "rbac": 0}, false},
		{map[string]string{"failover": " 0 "}, map[string]int{"failover": 0}, false},
		{map[string]string{"failover": "-1"}, nil, true},
		{map[string]string{"failover": "three"}, nil, true},
		{map[string]string{"failover": "2.5"}, nil, true},
	} {
		got, err := ParseWarm(tc.in)
		if tc.err != (err != nil) || tc.err && !errors.Is(err, ErrInvalid) {
			t.Errorf("%v: got error %v, want an ErrInvalid: %v", tc.in, err, tc.err)
		}
		if !maps.Equal(got, tc.want) {
			t.Errorf("%v: got %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestJSONConvention: what the class service hands out with JSON keys
// keeps docs/api.md's convention (see jsonconv.Check): a time limit or a
// time to recovery in ...Ms, never in nanoseconds.
func TestJSONConvention(t *testing.T) {
	t.Parallel()
	for _, v := range []any{Joined{}, Admission{}, Row{}, Member{}} {
		for _, err := range jsonconv.Check(v) {
			t.Errorf("%T: %v", v, err)
		}
	}
}
