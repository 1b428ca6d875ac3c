package console

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bwrapWorks skips the test, saying why, when bubblewrap cannot run here
// at all; everywhere else a sandbox failure fails the test.
func bwrapWorks(t *testing.T) {
	t.Helper()
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap is not installed (scripts/ensure-bwrap.sh installs it): the sandbox cannot be tested here")
	}
	if out, err := exec.Command(bwrap, "--ro-bind", "/", "/", "--unshare-user", "--unshare-pid", "--proc", "/proc", "true").CombinedOutput(); err != nil {
		t.Skipf("bwrap cannot create namespaces on this machine (%v: %s): the sandbox cannot be tested here", err, strings.TrimSpace(string(out)))
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

func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
