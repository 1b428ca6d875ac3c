package console

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"oplab.dev/oplab/internal/bwrap"
)

// blockingRunner is a Runner on a stand-in kubectl that notes each start
// in a file and then runs until it is stopped, so that commands stay
// running for as long as a test needs.
func blockingRunner(t *testing.T, limits Limits) (*Runner, func() []string) {
	t.Helper()
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	kubectl := filepath.Join(dir, "kubectl")
	// The runner's environment has no PATH to sleep(1): name it.
	script := "#!/bin/sh\necho \"$*\" >> " + marker + "\nexec " + sleepPath(t) + " 120\n"
	if err := os.WriteFile(kubectl, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := New(context.Background(), Options{Kubectl: kubectl, Sandbox: bwrap.Off, TempDir: t.TempDir(), Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	started := func() []string {
		b, _ := os.ReadFile(marker)
		if len(b) == 0 {
			return nil
		}
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	return r, started
}

func sleepPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatalf("sleep(1) for the stand-in kubectl: %v", err)
	}
	return p
}

// running is a command started in the background.
type running struct {
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
	err    error
}

// end stops the command and returns how Run ended.
func (c *running) end() error {
	c.once.Do(func() { c.cancel(); c.err = <-c.done })
	return c.err
}

// start runs line for owner in the background and returns once the
// stand-in kubectl has started, or with Run's error when Run returned
// first. The test's end stops what started.
func start(t *testing.T, r *Runner, started func() []string, owner, line string) (*running, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &running{cancel: cancel, done: make(chan error, 1)}
	before := len(started())
	go func() {
		_, err := r.Run(ctx, Request{Target: Target{Owner: owner, Kubeconfig: []byte("apiVersion: v1\nkind: Config\n")}, Line: line})
		c.done <- err
	}()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if len(started()) > before {
			t.Cleanup(func() { c.end() })
			return c, nil
		}
		select {
		case err := <-c.done:
			cancel()
			return nil, err
		default:
		}
	}
	cancel()
	t.Fatalf("%q for %s neither started nor returned in 30 s", line, owner)
	return nil, nil
}

// TestLimitsPerOwner: an owner's commands are capped at once, its follows
// more tightly; over a cap a line is refused at once with a message that
// says what is running, and nothing starts; another owner is not held
// back; a place is given back when a command ends.
func TestLimitsPerOwner(t *testing.T) {
	r, started := blockingRunner(t, Limits{Commands: 4, Follows: 2})
	const (
		tooManyFollows  = "2 commands that keep running (get -w, logs -f, rollout status, wait) are still open: stop one before you start another"
		tooManyCommands = "4 commands are still running: wait for one to finish or stop it"
	)
	steps := []struct {
		owner, line string
		refused     string // "" when it must start
	}{
		{"ada", "kubectl get pods -w", ""},
		{"ada", "kubectl logs demo-0 -f", ""},
		{"ada", "kubectl rollout status sts/demo", tooManyFollows},
		{"ada", "kubectl wait --for=condition=Ready pgc/demo", tooManyFollows},
		{"bob", "kubectl get pods -w", ""}, // bob's own caps
		{"ada", "kubectl get pods", ""},
		{"ada", "kubectl describe pgc demo", ""},
		{"ada", "kubectl get nodes", tooManyCommands},
		{"ada", "kubectl get pods -w", tooManyCommands},
		// A line refused for its own reason says so, over the cap or not.
		{"ada", "kubectl cp demo-0:/etc/passwd x", "kubectl cp copies files to and from the server: not available in the console"},
		{"bob", "kubectl logs demo-0 -f", ""},
		{"bob", "kubectl get events -w", tooManyFollows},
	}
	var ada []*running
	for _, st := range steps {
		n := len(started())
		c, err := start(t, r, started, st.owner, st.line)
		switch {
		case st.refused == "" && err != nil:
			t.Fatalf("%s: %q: got %v, want it started", st.owner, st.line, err)
		case st.refused == "":
			if st.owner == "ada" {
				ada = append(ada, c)
			}
		case err == nil:
			t.Fatalf("%s: %q: got it started, want refused with %q", st.owner, st.line, st.refused)
		case !errors.Is(err, ErrRefused) || err.Error() != st.refused:
			t.Errorf("%s: %q: got %v, want a refusal %q", st.owner, st.line, err, st.refused)
		case st.refused != tooManyFollows && st.refused != tooManyCommands && errors.Is(err, ErrTooMany):
			t.Errorf("%s: %q: got ErrTooMany, want a refusal of the line itself", st.owner, st.line)
		case (st.refused == tooManyFollows || st.refused == tooManyCommands) && !errors.Is(err, ErrTooMany):
			t.Errorf("%s: %q: got %v, want it to match ErrTooMany", st.owner, st.line, err)
		}
		if st.refused != "" && len(started()) != n {
			t.Errorf("%s: %q was refused but kubectl started: %q", st.owner, st.line, started())
		}
	}
	if c, f := r.limits.load("ada"); c != 4 || f != 2 {
		t.Errorf("ada's load: got %d commands, %d follows; want 4, 2", c, f)
	}

	// Tab over the cap completes to nothing, without asking the cluster.
	n := len(started())
	comp, err := r.Completer(Target{Owner: "ada", Kubeconfig: []byte("x"), Remote: nil}).Complete(context.Background(), "kubectl get pods de")
	if err != nil || len(comp.Candidates) != 0 || len(started()) != n {
		t.Errorf("completion over the cap: got %q, %v (%d starts); want nothing, no error, no start", comp.Candidates, err, len(started())-n)
	}

	// Stopping the first watch gives its places back: a follow starts.
	if err := ada[0].end(); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped watch: got %v, want context.Canceled", err)
	}
	if _, err := start(t, r, started, "ada", "kubectl rollout status sts/demo"); err != nil {
		t.Fatalf("after one stopped: got %v, want the follow started", err)
	}
}

// TestLimitsGiveBackEveryPlace: whatever way a command ends (its exit, its
// time limit, a refusal of its input), its places are given back, and an
// owner with nothing running is forgotten.
func TestLimitsGiveBackEveryPlace(t *testing.T) {
	dir := t.TempDir()
	kubectl := filepath.Join(dir, "kubectl")
	// Exits at once for version, fails for get, runs on for -w.
	script := "#!/bin/sh\ncase \"$*\" in version*) exit 0;; *-w*) exec " + sleepPath(t) + " 120;; *) exit 3;; esac\n"
	if err := os.WriteFile(kubectl, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := New(context.Background(), Options{Kubectl: kubectl, Sandbox: bwrap.Off, TempDir: t.TempDir(),
		FollowTimeout: 200 * time.Millisecond, Limits: Limits{Commands: 1, Follows: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	kc := []byte("apiVersion: v1\nkind: Config\n")
	for _, tt := range []struct {
		line  string
		stdin string
		want  error
	}{
		{"kubectl version --client", "", nil},
		{"kubectl get pods", "", &ExitError{Code: 3}},
		{"kubectl get pods -w", "", ErrTimeout},
		{"kubectl apply -f -", "", ErrRefused}, // the editor is empty
		{"kubectl version --client", "", nil},
	} {
		_, err := r.Run(context.Background(), Request{Target: Target{Owner: "ada", Kubeconfig: kc}, Line: tt.line, Stdin: []byte(tt.stdin)})
		var exit *ExitError
		switch want := tt.want.(type) {
		case nil:
			if err != nil {
				t.Errorf("%q: got %v, want it to succeed (a place left taken?)", tt.line, err)
			}
		case *ExitError:
			if !errors.As(err, &exit) || exit.Code != want.Code {
				t.Errorf("%q: got %v, want exit status %d", tt.line, err, want.Code)
			}
		default:
			if !errors.Is(err, want) || errors.Is(err, ErrTooMany) {
				t.Errorf("%q: got %v, want %v", tt.line, err, want)
			}
		}
		if c, f := r.limits.load("ada"); c != 0 || f != 0 {
			t.Errorf("after %q: ada's load is %d commands, %d follows; want none", tt.line, c, f)
		}
	}
	if len(r.limits.running) != 0 {
		t.Errorf("owners remembered with nothing running: %v", r.limits.running)
	}
	if _, err := r.Run(context.Background(), Request{Target: Target{Kubeconfig: kc}, Line: "kubectl version --client"}); err == nil || errors.Is(err, ErrRefused) {
		t.Errorf("no owner: got %v, want an error (every command has an owner)", err)
	}
}

func TestLimitsDefaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want Limits }{
		{Limits{}, Limits{Commands: DefaultMaxCommands, Follows: DefaultMaxFollows, PerSecond: DefaultPerSecond, Burst: DefaultBurst}},
		{Limits{Commands: 1}, Limits{Commands: 1, Follows: 1, PerSecond: DefaultPerSecond, Burst: DefaultBurst}},
		{Limits{Commands: 8, Follows: 3, PerSecond: 2, Burst: 3}, Limits{Commands: 8, Follows: 3, PerSecond: 2, Burst: 3}},
		{Limits{Commands: -1, Follows: -1, PerSecond: -1, Burst: -1}, Limits{Commands: DefaultMaxCommands, Follows: DefaultMaxFollows, PerSecond: DefaultPerSecond, Burst: DefaultBurst}},
	} {
		if got := newLimiter(tt.in).max; got != tt.want {
			t.Errorf("newLimiter(%+v): got %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// TestLinesPerSecond: an owner's lines, refused ones included, are
// bounded by a rate; beyond its burst a line is refused at once with
// ErrTooFast and nothing is parsed or started; another owner is not held
// back.
func TestLinesPerSecond(t *testing.T) {
	r, _ := blockingRunner(t, Limits{PerSecond: 1, Burst: 5})
	kc := []byte("apiVersion: v1\nkind: Config\n")
	fast := 0
	for range 50 {
		// A line the allow-list refuses: it starts nothing, but it would
		// be recorded.
		_, err := r.Run(context.Background(), Request{Target: Target{Owner: "mallory", Kubeconfig: kc}, Line: "kubectl cp " + strings.Repeat("x", 1000)})
		if errors.Is(err, ErrTooFast) {
			if !errors.Is(err, ErrRefused) {
				t.Fatal("ErrTooFast is not a refusal")
			}
			fast++
		} else if !errors.Is(err, ErrRefused) {
			t.Fatalf("a refused line: %v", err)
		}
	}
	// 50 lines in well under the 45 s the rate would need: the burst of 5
	// and at most a few more pass.
	if fast < 40 {
		t.Errorf("%d of 50 lines were refused for their rate, want at least 40", fast)
	}
	if _, err := r.Run(context.Background(), Request{Target: Target{Owner: "ada", Kubeconfig: kc}, Line: "kubectl cp a b"}); errors.Is(err, ErrTooFast) {
		t.Error("another owner's line was refused for mallory's rate")
	}
}
