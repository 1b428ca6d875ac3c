package controllab

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/labs"
)

// fakeKit is a kit with only the lab module's go.mod and go.sum: enough
// to lay a module out, not to build it.
func fakeKit(t *testing.T) Kit {
	k := Kit{Dir: t.TempDir()}
	for _, f := range moduleFiles {
		p := filepath.Join(k.Dir, "module", f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("// "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// TestLabModulesOfEveryStep: every module a lab's runController step names
// (its module and the variants laid over it) exists: a misspelt repair
// fails here, not after minutes of a self-test.
func TestLabModulesOfEveryStep(t *testing.T) {
	all, errs := lab.LoadAll(labs.FS)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	k := fakeKit(t)
	seen := 0
	for _, l := range all {
		if !l.LearnerWritesController() {
			continue
		}
		steps := append([]lab.Step(nil), l.Setup...)
		for _, ex := range l.Exercises {
			steps = append(steps, ex.Before...)
			steps = append(steps, ex.Solution...)
			for _, sc := range ex.Shortcuts {
				steps = append(steps, sc.Steps...)
				steps = append(steps, sc.Undo...)
			}
		}
		for _, s := range steps {
			r, ok := s.Params.(*lab.RunController)
			if !ok {
				continue
			}
			seen++
			if _, err := LabModule(l.ID, r.Module, r.With, k); err != nil {
				t.Errorf("lab %s: runController %s: %v", l.ID, r.Name(), err)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no lab runs a module")
	}
}

// TestLabBuiltOnAnother: fix-reconciler's module is write-reconciler's
// with its own controller package laid over it; its manifests are
// write-reconciler's.
func TestLabBuiltOnAnother(t *testing.T) {
	k := fakeKit(t)
	fix, err := LabModule("fix-reconciler", "scaffold", nil, k)
	if err != nil {
		t.Fatal(err)
	}
	base, err := LabModule("write-reconciler", "scaffold", nil, k)
	if err != nil {
		t.Fatal(err)
	}
	own, err := labs.Module("fix-reconciler")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"main.go", "api/v1/webapp_types.go", "go.mod"} {
		if fix[name] == nil || !bytes.Equal(fix[name], base[name]) {
			t.Errorf("%s: not the base's", name)
		}
	}
	for _, name := range []string{"internal/controller/webapp_controller.go", "internal/controller/configmap.go"} {
		want, err := fs.ReadFile(own, name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fix[name], want) {
			t.Errorf("%s: not fix-reconciler's own", name)
		}
	}
	// A repair replaces its one file and leaves the others.
	fixed, err := LabModule("fix-reconciler", "scaffold", []string{"one-configmap"}, k)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(fixed["internal/controller/configmap.go"], fix["internal/controller/configmap.go"]) {
		t.Error("one-configmap did not replace configmap.go")
	}
	if !bytes.Equal(fixed["internal/controller/status.go"], fix["internal/controller/status.go"]) {
		t.Error("one-configmap changed status.go")
	}
	if _, err := LabModule("fix-reconciler", "scaffold", []string{"no-such-repair"}, k); err == nil {
		t.Error("an unknown variant: no error")
	}
	for _, m := range []string{"crd.yaml", "rbac.yaml", "controller.yaml"} {
		a, err := labs.Manifest("fix-reconciler", m)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := labs.Manifest("write-reconciler", m)
		if a != b {
			t.Errorf("%s: not write-reconciler's", m)
		}
	}
	if _, err := labs.Manifest("no-such-lab", "crd.yaml"); err == nil {
		t.Error("a lab with no manifests: no error")
	}
}
