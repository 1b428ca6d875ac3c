package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

// operatorBinDir returns a bin directory with the control plane of
// clustertest.BinDir and, as pg-operator, the installer's stand-in operator
// (the real operator's behaviour is tested in its own package).
func operatorBinDir(t *testing.T) string {
	return binDirWithOperator(t, "oplab.dev/oplab/internal/operator/install/testdata/standin")
}

// binDirWithOperator returns a bin directory with the control plane of
// clustertest.BinDir, hostpod, and operatorPkg built as pg-operator, all
// from the current tree.
func binDirWithOperator(t *testing.T, operatorPkg string) string {
	t.Helper()
	src := clustertest.BinDir(t)
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	for name, pkg := range map[string]string{"hostpod": "oplab.dev/oplab/cmd/hostpod", "pg-operator": operatorPkg} {
		_ = os.Remove(filepath.Join(dir, name))
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return dir
}

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestOperatorCommands installs, reads the log of (once and following) and
// uninstalls the operator in an embedded cluster, as a user would.
func TestOperatorCommands(t *testing.T) {
	bin := operatorBinDir(t)
	flags := []string{"--data-dir", t.TempDir(), "--bin-dir", bin}
	t.Cleanup(func() { run(t, append([]string{"cluster", "delete", "--all"}, flags...)...) })
	if out, _, err := run(t, append([]string{"cluster", "create", "learner"}, flags...)...); err != nil {
		t.Fatalf("cluster create: %v\n%s", err, out)
	}

	if _, _, err := run(t, append([]string{"operator", "install"}, flags...)...); err == nil || !strings.Contains(err.Error(), "--cluster") {
		t.Errorf("install without --cluster: error %v, want one naming --cluster", err)
	}

	out, _, err := run(t, append([]string{"operator", "install", "--cluster", "learner"}, flags...)...)
	if err != nil {
		t.Fatalf("operator install: %v\n%s", err, out)
	}
	for _, want := range []string{"pg-operator installed (revision 1) and ready", "host process", "oplab operator logs --cluster learner -f"} {
		if !strings.Contains(out, want) {
			t.Errorf("install output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = run(t, append([]string{"operator", "install", "--cluster", "learner"}, flags...)...)
	if err != nil || !strings.Contains(out, "pg-operator upgraded (revision 2)") {
		t.Errorf("second install: %v, output %q, want an upgrade to revision 2", err, out)
	}

	out, _, err = run(t, append([]string{"operator", "logs", "--cluster", "learner"}, flags...)...)
	if err != nil || !strings.Contains(out, "standin operator starting") || !strings.Contains(out, "--instance-mode=simulated") {
		t.Errorf("operator logs: %v, output %q, want the operator's start line with --instance-mode=simulated", err, out)
	}

	// -f streams lines written after it started.
	ctx, cancel := context.WithCancel(t.Context())
	var follow syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Streams{In: strings.NewReader(""), Out: &follow, ErrOut: &follow}, append([]string{"operator", "logs", "--cluster", "learner", "-f"}, flags...))
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(follow.String(), "reconcile tick") || strings.Count(follow.String(), "\n") < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("operator logs -f printed %q in 30 s, want streaming reconcile ticks", follow.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	before := strings.Count(follow.String(), "reconcile tick")
	time.Sleep(time.Second)
	if after := strings.Count(follow.String(), "reconcile tick"); after <= before {
		t.Errorf("operator logs -f: %d tick lines, then %d a second later, want more", before, after)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("operator logs -f did not stop when its context ended")
	}

	out, _, err = run(t, append([]string{"operator", "uninstall", "--cluster", "learner"}, flags...)...)
	if err != nil || !strings.Contains(out, "uninstalled") {
		t.Fatalf("operator uninstall: %v, output %q", err, out)
	}
	if _, _, err := run(t, append([]string{"operator", "logs", "--cluster", "learner"}, flags...)...); err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("logs after uninstall: error %v, want operator not installed", err)
	}
}
