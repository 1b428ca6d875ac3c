package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/labs"
)

// TestLabRunFromTheTerminal is the write-reconciler lab done offline:
// `lab start` writes the module to a directory of the learner's (and
// refuses one that holds anything), an edit that does not compile is
// reported on its file and line and leaves the controller running, the
// reference solution written over the scaffold builds and runs, its passes
// are in `oplab logs`, and `lab check` grades the first exercise passed.
func TestLabRunFromTheTerminal(t *testing.T) {
	bin := clustertest.BinDir(t)
	work := t.TempDir()
	flags := []string{"--data-dir", t.TempDir(), "--bin-dir", bin}
	mod := filepath.Join(work, "mine")

	taken := filepath.Join(work, "taken")
	if err := os.MkdirAll(taken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(taken, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, append([]string{"lab", "start", "write-reconciler", "--dir", taken}, flags...)...); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("lab start into a directory with a file of the learner's: got %v, want it refused before anything starts", err)
	}

	stdout, _, err := run(t, append([]string{"lab", "start", "write-reconciler", "--dir", mod}, flags...)...)
	if err != nil {
		t.Fatalf("lab start: %v\n%s", err, stdout)
	}
	defer run(t, append([]string{"lab", "stop"}, flags...)...)
	if !strings.Contains(stdout, "Your module is in") {
		t.Errorf("lab start says nothing of the module:\n%s", stdout)
	}
	ctl := filepath.Join(mod, "internal", "controller", "webapp_controller.go")
	scaffold, err := os.ReadFile(ctl)
	if err != nil {
		t.Fatalf("the module was not written: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mod, "go.mod")); err != nil {
		t.Errorf("the module has no go.mod: %v", err)
	}

	// A line that does not compile.
	broken := strings.Replace(string(scaffold), "return ctrl.Result{}, nil\n}", "return ctrl.Result{}, nil, undefinedThing\n}", 1)
	if broken == string(scaffold) {
		t.Fatal("the scaffold's Reconcile does not end as this test expects")
	}
	if err := os.WriteFile(ctl, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, err = run(t, append([]string{"lab", "run", "--dir", mod}, flags...)...)
	line := 1 + strings.Count(broken[:strings.Index(broken, "undefinedThing")], "\n")
	want := fmt.Sprintf("internal/controller/webapp_controller.go:%d:", line)
	if err == nil || !strings.Contains(stdout, want) {
		t.Fatalf("lab run of a module that does not compile: %v\n%s\nwant an error and a message at %s", err, stdout, want)
	}

	// The reference solution, as a learner would write it.
	sol, err := labs.Solution("write-reconciler")
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(sol, "internal/controller/webapp_controller.go")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ctl, b, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, err = run(t, append([]string{"lab", "run", "--dir", mod}, flags...)...)
	if err != nil || !strings.Contains(stdout, "runs as your controller") {
		t.Fatalf("lab run of the solution: %v\n%s", err, stdout)
	}
	stdout, _, err = run(t, append([]string{"lab", "check"}, flags...)...)
	if err != nil || !strings.Contains(stdout, "childrenMatchSpec") {
		t.Fatalf("lab check after the solution runs: %v\n%s", err, stdout)
	}
	stdout, _, err = run(t, append([]string{"logs"}, flags...)...)
	if err != nil || !strings.Contains(stdout, "check-") {
		t.Errorf("oplab logs after the check: %v\n%s\nwant the controller's passes over the check's WebApps", err, stdout)
	}
}
