package console

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/bwrap"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/walltest"
)

// bwrapWorks fails the test, saying why, when bubblewrap cannot run here
// at all (skips it where walltest's rule lets a wall go untested);
// everywhere else a sandbox failure fails the test.
func bwrapWorks(t *testing.T) {
	t.Helper()
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		walltest.Require(t, walltest.Sandbox, fmt.Errorf("bwrap is not installed (scripts/ensure-bwrap.sh installs it): %w", err))
		return
	}
	if out, err := exec.Command(bwrap, "--ro-bind", "/", "/", "--unshare-user", "--unshare-pid", "--proc", "/proc", "true").CombinedOutput(); err != nil {
		walltest.Require(t, walltest.Sandbox, fmt.Errorf("bwrap cannot create namespaces on this machine (%w: %s)", err, strings.TrimSpace(string(out))))
	}
}

// TestSandboxHidesServerFiles runs a probe (this test binary) through the
// same sandbox wrapper as kubectl and checks that it reads its own
// directory but not a file of the server's.
func TestSandboxHidesServerFiles(t *testing.T) {
	bwrapWorks(t)
	sb, err := newSandbox(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "server-secret")
	if err := os.WriteFile(secret, []byte("the server's secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := sb.command(ctx, procSpec{prog: self, dir: dir, extra: []string{probeEnv + "=" + secret}})
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("probe in the sandbox: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{"secret: unreadable\n", "kubeconfig: ok\n", "uid: 65534\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("probe said:\n%s\nwant a line %q", got, want)
		}
	}
	// The server's directories are not in the sandbox's root.
	root := strings.Fields(strings.TrimPrefix(lineWith(got, "root:"), "root:"))
	for _, hidden := range []string{"root", "home", "work", "var", "srv"} {
		for _, name := range root {
			if name == hidden {
				t.Errorf("sandbox root has /%s: got %q", hidden, root)
			}
		}
	}
	// Without the sandbox the same probe reads the file: the check above
	// can fail.
	c = exec.CommandContext(ctx, self)
	c.Env = []string{probeEnv + "=" + secret}
	out, err = c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "secret: READ") {
		t.Fatalf("probe outside the sandbox: got %q (%v), want it to read the secret", out, err)
	}
}

// hostUIDOf waits for a process whose command line starts with cmdline
// (its arguments NUL-separated) and returns its real user id as the host
// sees it.
func hostUIDOf(t *testing.T, cmdline string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			c, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err != nil || !strings.HasPrefix(string(c), cmdline) {
				continue
			}
			st, err := os.ReadFile("/proc/" + e.Name() + "/status")
			if err != nil {
				continue
			}
			if f := strings.Fields(lineWith(string(st), "Uid:")); len(f) > 1 {
				return f[1]
			}
		}
	}
	t.Fatalf("no process %q seen", cmdline)
	return ""
}

func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestSandboxMissing: without bubblewrap the runner says so and runs
// kubectl unsandboxed (bwrap.Auto), or does not start at all
// (bwrap.Required).
func TestSandboxMissing(t *testing.T) {
	dir := t.TempDir()
	kubectl := filepath.Join(dir, "kubectl")
	if err := os.WriteFile(kubectl, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // no bwrap there
	var log strings.Builder
	r, err := New(context.Background(), Options{Kubectl: kubectl, TempDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatalf("bwrap.Auto without bwrap: got %v, want a runner", err)
	}
	defer r.Close()
	if r.Sandboxed() {
		t.Error("bwrap.Auto without bwrap: got Sandboxed() true, want false")
	}
	if !strings.Contains(log.String(), "kubectl runs unsandboxed") {
		t.Errorf("bwrap.Auto without bwrap: logged %q, want the warning", log.String())
	}
	_, err = New(context.Background(), Options{Kubectl: kubectl, TempDir: t.TempDir(), Sandbox: bwrap.Required})
	if err == nil || !strings.Contains(err.Error(), "sandbox required: bwrap not found") {
		t.Errorf("bwrap.Required without bwrap: got %v, want it refused", err)
	}
}

// TestEveryPathSandboxed: each way the console runs kubectl for a learner
// — a line (which the YAML editor's apply -f - is too) and Tab's
// questions — runs it in the sandbox, as the sandbox's user in the
// sandbox's home. The kubectl here is a probe that names where it runs.
func TestEveryPathSandboxed(t *testing.T) {
	bwrapWorks(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(t.TempDir(), "kubectl")
	if err := os.WriteFile(kubectl, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := New(context.Background(), Options{Kubectl: kubectl, TempDir: t.TempDir(), Sandbox: bwrap.Required,
		Cell: filepath.Join(clustertest.BinDir(t), "cell")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want := "console-uid65534"
	// Under a root oplab the sandbox's user is a host user of the
	// console's own, never root (not even mapped into a namespace): seen
	// from the host while the command runs.
	if os.Geteuid() == 0 {
		done := make(chan error, 1)
		go func() {
			_, err := r.Run(context.Background(), Request{Target: Target{Owner: "ada", Kubeconfig: []byte("apiVersion: v1\nkind: Config\n")},
				Line: "kubectl get hostuid"})
			done <- err
		}()
		if uid := hostUIDOf(t, "/opt/kubectl/kubectl\x00get\x00hostuid"); uid != strconv.Itoa(User) {
			t.Errorf("the sandboxed kubectl runs as host user %s, want %d", uid, User)
		}
		if err := <-done; err != nil {
			t.Errorf("kubectl get hostuid: %v", err)
		}
	}
	kc := []byte("apiVersion: v1\nkind: Config\n")
	ctx := context.Background()

	for _, tt := range []struct{ line, stdin string }{
		{"kubectl get pods -o name", ""},
		{"kubectl apply -f -", "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"},
	} {
		var out strings.Builder
		_, err := r.Run(ctx, Request{Target: Target{Owner: "ada", Kubeconfig: kc}, Line: tt.line, Stdin: []byte(tt.stdin), Output: func(c Chunk) { out.Write(c.Data) }})
		if err != nil || strings.TrimSpace(out.String()) != "pod/"+want {
			t.Errorf("%q: got %q (%v), want pod/%s", tt.line, out.String(), err, want)
		}
	}
	comp, err := r.Completer(Target{Owner: "ada", Kubeconfig: kc, Remote: nil}).Complete(ctx, "kubectl logs ")
	if err != nil || len(comp.Candidates) != 1 || comp.Candidates[0] != want {
		t.Errorf("completion: got %q (%v), want [%s]", comp.Candidates, err, want)
	}
}
