package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/board"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/store"
)

// runIn executes the oplab command line with stdin as standard input.
func runIn(t *testing.T, stdin string, args ...string) (stdout string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = Run(ctx, Streams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}, args)
	return out.String(), err
}

// TestInstructorCommands adds instructors with piped passwords and lists
// them; the password is checked with the class service on the same store.
func TestInstructorCommands(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	flags := []string{"--data-dir", data}
	out, err := runIn(t, "a long enough password\n", append([]string{"instructor", "add", "ada", "--admin"}, flags...)...)
	if err != nil || out != "Added admin \"ada\".\n" {
		t.Fatalf("add ada: got %q, %v", out, err)
	}
	for _, tt := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"another password\n", []string{"instructor", "add", "ada"}, "already exists"},
		{"short\n", []string{"instructor", "add", "bob"}, "at least 10 characters"},
		{"", []string{"instructor", "add", "bob"}, "no password"},
		{"a long enough password\n", []string{"instructor", "add", "no/slash"}, "invalid instructor name"},
		{"", []string{"instructor", "list", "-o", "yaml"}, "unknown output format"},
	} {
		if _, err := runIn(t, tt.stdin, append(tt.args, flags...)...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want an error containing %q", tt.args, err, tt.want)
		}
	}
	if _, err := runIn(t, "grace's password\r\n", append([]string{"instructor", "add", "grace"}, flags...)...); err != nil {
		t.Fatal(err)
	}
	out, err = runIn(t, "", append([]string{"instructor", "list", "-o", "json"}, flags...)...)
	var ins []class.Instructor
	if err != nil || json.Unmarshal([]byte(out), &ins) != nil || len(ins) != 2 || !ins[0].Admin || ins[1].Name != "grace" || ins[1].Admin {
		t.Fatalf("list -o json: got %s, %v; want ada (admin) and grace", out, err)
	}
	out, _ = runIn(t, "", append([]string{"instructor", "list"}, flags...)...)
	if !regexp.MustCompile(`(?m)^ada\s+admin\s`).MatchString(out) || !regexp.MustCompile(`(?m)^grace\s+instructor\s`).MatchString(out) {
		t.Errorf("list:\n%s", out)
	}
	svc, closeStore := openClasses(t, data)
	defer closeStore()
	// The line ending of a piped password is not part of it.
	if _, err := svc.Verify(t.Context(), "127.0.0.1", "grace", "grace's password"); err != nil {
		t.Errorf("verify grace's piped password: %v", err)
	}
	if out, err := runIn(t, "", append([]string{"instructor", "remove", "grace"}, flags...)...); err != nil || !strings.Contains(out, "Removed instructor \"grace\"") {
		t.Fatalf("remove grace: got %q, %v", out, err)
	}
	if _, err := svc.Verify(t.Context(), "127.0.0.2", "grace", "grace's password"); err == nil {
		t.Error("grace signs in after her removal")
	}
	if _, err := runIn(t, "", append([]string{"instructor", "remove", "grace"}, flags...)...); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("remove grace twice: got %v, want not found", err)
	}
}

func openClasses(t *testing.T, data string) (*class.Service, func()) {
	t.Helper()
	st, err := store.OpenDir(t.Context(), data)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := class.New(class.Options{Store: st, Labs: course.Embedded().Labs})
	if err != nil {
		t.Fatal(err)
	}
	return svc, func() { st.Close() }
}

// TestClassCommands runs a class's life from the command line: create,
// list, learners join (through the class service, as the server will),
// show, edit, close and export.
func TestClassCommands(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	flags := []string{"--data-dir", data}
	cli := func(args ...string) (string, error) { return runIn(t, "", append(args, flags...)...) }
	if _, err := cli("class", "create", "morning", "--labs", "failover"); err == nil || !strings.Contains(err.Error(), "add one first") {
		t.Errorf("create with no instructor: got %v, want a hint to add one", err)
	}
	if _, err := runIn(t, "ada's password\n", append([]string{"instructor", "add", "ada"}, flags...)...); err != nil {
		t.Fatal(err)
	}

	out, err := cli("class", "create", "morning", "--labs", "failover,rbac", "--capacity", "2",
		"--opens", "2020-01-01T09:00:00Z", "--closes", "2099-01-01 17:00", "--time-limit", "90m", "--warm", "failover=2")
	if err != nil {
		t.Fatalf("create: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Warm:        failover=2") {
		t.Errorf("create output lacks the warm sessions:\n%s", out)
	}
	code := regexp.MustCompile(`Join code:\s+([2-9A-Z]{5}-[2-9A-Z]{5})`).FindStringSubmatch(out)
	if code == nil || !strings.Contains(out, "Owner:       ada") || !strings.Contains(out, "1h30m0s per session") || !strings.Contains(out, "0 of 2") {
		t.Fatalf("create output lacks the join code, owner, limit or places:\n%s", out)
	}

	svc, closeStore := openClasses(t, data)
	defer closeStore()
	alice, err := svc.Join(t.Context(), "127.0.0.1", code[1], "Alice")
	if err != nil {
		t.Fatal(err)
	}

	out, err = cli("class", "list")
	if err != nil || !regexp.MustCompile(`(?m)^morning\s+open\s+1 of 2\s+failover,rbac\s`).MatchString(out) || !strings.Contains(out, code[1]) {
		t.Errorf("list: got %v\n%s", err, out)
	}
	out, err = cli("class", "show", "morning", "-o", "json")
	var shown struct {
		board.Class
		Learners []class.Member `json:"learners"`
	}
	if err != nil || json.Unmarshal([]byte(out), &shown) != nil || shown.Name != "morning" || shown.JoinCode != code[1] ||
		len(shown.Learners) != 1 || shown.Learners[0].Learner != alice.Learner || shown.TimeLimit.Duration() != 90*time.Minute {
		t.Errorf("show -o json: got %v\n%s", err, out)
	}
	out, _ = cli("class", "show", "morning")
	if !strings.Contains(out, alice.Learner) || !strings.Contains(out, "Alice") {
		t.Errorf("show lacks the learner:\n%s", out)
	}

	if _, err := cli("class", "edit", "morning", "--warm", "rbac=3"); err == nil || !strings.Contains(err.Error(), "between 0 and 2") {
		t.Errorf("edit to more warm sessions than places: got %v, want refused", err)
	}
	out, err = cli("class", "edit", "morning", "--capacity", "1", "--new-code", "--warm", "failover=0,rbac=1", "-o", "json")
	var edited board.Class
	if err != nil || json.Unmarshal([]byte(out), &edited) != nil || edited.Capacity != 1 || edited.JoinCode == code[1] ||
		edited.State != class.StateFull || len(edited.Labs) != 2 || edited.TimeLimit.Duration() != 90*time.Minute ||
		len(edited.Warm) != 1 || edited.Warm["rbac"] != 1 {
		t.Errorf("edit: got %v\n%s", err, out)
	}
	out, err = cli("class", "close", "morning")
	if err != nil || !strings.Contains(out, `Closed class "morning"`) {
		t.Errorf("close: got %v\n%s", err, out)
	}
	if _, err := svc.Rejoin(t.Context(), "127.0.0.1", alice.RejoinCode); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("rejoin after close: got %v, want closed", err)
	}

	out, err = cli("class", "export", "morning")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("export is not CSV: %v\n%s", err, out)
	}
	if len(rows) != 4 || strings.Join(rows[0], ",") != strings.Join(class.Header, ",") ||
		rows[1][0] != alice.Learner || rows[1][1] != "Alice" || rows[1][2] != "failover" || rows[3][2] != "rbac" {
		t.Errorf("export: got %q, want a header and Alice's three exercises", rows)
	}
}

func TestClassUsageErrors(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if _, err := runIn(t, "a long enough password\n", "instructor", "add", "ada", "--data-dir", data); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"class", "create"}, "accepts 1 arg"},
		{[]string{"class", "create", "x"}, "at least one lab"},
		{[]string{"class", "create", "x", "--labs", "nope"}, `unknown lab "nope"`},
		{[]string{"class", "create", "x", "--labs", "rbac", "--opens", "tomorrow"}, `--opens "tomorrow"`},
		{[]string{"class", "create", "x", "--labs", "rbac", "--opens", "2026-12-07 10:00", "--closes", "2026-12-07 09:00"}, "before it opens"},
		{[]string{"class", "create", "x", "--labs", "rbac", "--owner", "eve"}, `no instructor "eve"`},
		{[]string{"class", "create", "x", "--labs", "rbac", "-o", "yaml"}, "unknown output format"},
		{[]string{"class", "show", "ghost"}, "not found"},
		{[]string{"class", "edit", "ghost", "--capacity", "3"}, "not found"},
		{[]string{"class", "close", "ghost"}, "not found"},
		{[]string{"class", "export", "ghost"}, "not found"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := runIn(t, "", append(tt.args, "--data-dir", data)...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
