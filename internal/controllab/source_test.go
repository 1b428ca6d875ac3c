package controllab

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func TestParseErrors(t *testing.T) {
	out := `# example.com/webapp/internal/controller
internal/controller/webapp_controller.go:68:2: declared and not used: x
./main.go:12:20: undefined: notDeclared
api/v1/webapp_types.go:7: syntax error: unexpected newline
go: updates to go.mod needed
`
	got := ParseErrors(out)
	want := []CompileError{
		{File: "internal/controller/webapp_controller.go", Line: 68, Column: 2, Msg: "declared and not used: x"},
		{File: "main.go", Line: 12, Column: 20, Msg: "undefined: notDeclared"},
		{File: "api/v1/webapp_types.go", Line: 7, Msg: "syntax error: unexpected newline"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d errors %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("error %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestFilesCheck: a module is .go files, go.mod and go.sum at plain
// relative paths, within the bounds; anything else is refused with a
// message naming it.
func TestFilesCheck(t *testing.T) {
	ok := Files{"main.go": []byte("package main"), "internal/c/c.go": []byte("package c"), "go.mod": nil}
	if err := ok.Check(); err != nil {
		t.Fatalf("a plain module: %v", err)
	}
	for name, f := range map[string]Files{
		"a path out of the module": {"../x.go": nil},
		"an absolute path":         {"/etc/x.go": nil},
		"a hidden directory":       {".git/x.go": nil},
		"a vendor tree":            {"vendor/k8s.io/x.go": nil},
		"an underscore directory":  {"_x/x.go": nil},
		"a file that is not Go":    {"static/index.html": nil},
		"an embedded file":         {"secret.txt": nil},
		"a file too large":         {"big.go": make([]byte, MaxFileBytes+1)},
	} {
		if err := f.Check(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	many := Files{}
	for i := range MaxFiles + 1 {
		many[filepath.Join("p", strings.Repeat("x", i+1)+".go")] = nil
	}
	if err := many.Check(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("%d files: %v, want ErrTooLarge", len(many), err)
	}
	big := Files{}
	for i := range 5 {
		big[strings.Repeat("y", i+1)+".go"] = make([]byte, MaxBytes/4)
	}
	if err := big.Check(); !errors.Is(err, ErrTooLarge) {
		t.Errorf("%d bytes: %v, want ErrTooLarge", 5*MaxBytes/4, err)
	}
}

// TestReadDir: reading a learner's directory takes the module's files,
// leaves the rest out, and refuses a link (which could name any file of
// the machine) and a directory without go.mod.
func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadDir(dir); err == nil {
		t.Error("a directory without go.mod: no error")
	}
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/webapp\n")
	write("main.go", "package main\n")
	write("README.md", "notes\n")
	write(".git/HEAD", "ref\n")
	write("bin/controller", "\x7fELF")
	f, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(f.Names(), " "); got != "go.mod main.go" {
		t.Errorf("read %q, want go.mod and main.go", got)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd.go")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDir(dir); err == nil || !strings.Contains(err.Error(), "passwd.go") {
		t.Errorf("a link: %v, want it refused by name", err)
	}
}

// TestOverlayAndWriteModule: a solution laid over a module replaces its
// files; WriteModule refuses a directory that holds anything.
func TestOverlayAndWriteModule(t *testing.T) {
	base := Files{"main.go": []byte("package main // base"), "c/c.go": []byte("package c // base")}
	top := fstest.MapFS{"c/c.go": {Data: []byte("package c // solution")}}
	f, err := Overlay(base, top)
	if err != nil {
		t.Fatal(err)
	}
	if string(f["c/c.go"]) != "package c // solution" || string(f["main.go"]) != "package main // base" {
		t.Errorf("overlay: %q", f)
	}
	if string(base["c/c.go"]) != "package c // base" {
		t.Error("Overlay changed its base")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mine.go"), []byte("package mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	kit := Kit{Dir: t.TempDir()}
	if err := WriteModule(dir, top, kit); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("WriteModule into a directory with a file: %v, want refused", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "mine.go")); string(b) != "package mine" {
		t.Error("WriteModule changed the learner's file")
	}
}
