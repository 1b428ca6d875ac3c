package app

import (
	"errors"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/controllab"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	messy := "package controller\n\nimport (\n\"fmt\"\n  \"context\"\n)\n\nfunc  Reconcile( ctx context.Context)error{\n    fmt.Println( \"hi\" )\n  return nil}\n"
	tidy := "package controller\n\nimport (\n\t\"context\"\n\t\"fmt\"\n)\n\nfunc Reconcile(ctx context.Context) error {\n\tfmt.Println(\"hi\")\n\treturn nil\n}\n"
	got, err := FormatFiles(controllab.Files{"internal/controller/r.go": []byte(messy), "go.mod": []byte("module x\n")})
	if err != nil {
		t.Fatal(err)
	}
	if !got.OK || len(got.Errors) != 0 {
		t.Fatalf("a messy file that parses: got ok %v, errors %v, want ok", got.OK, got.Errors)
	}
	if s := got.Files["internal/controller/r.go"]; s != tidy {
		t.Errorf("formatted:\n%s\nwant:\n%s", s, tidy)
	}
	if _, ok := got.Files["go.mod"]; ok || len(got.Files) != 1 {
		t.Errorf("files answered: got %v, want only the .go file", got.Files)
	}
}

func TestFormatSyntaxError(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		src  string
		line int
		msg  string
	}{
		"a missing brace": {"package p\n\nfunc f() {\n\tx := 1\n\tif x > 0 {\n\t\treturn\n}\n", 7, "expected '}'"},
		"a stray token":   {"package p\n\nfunc f() {\n\tx := := 1\n}\n", 4, "expected operand"},
		// format.Source would format a fragment; a module's file is whole.
		"no package clause": {"func f() {}\n", 1, "expected 'package'"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := FormatFiles(controllab.Files{"main.go": []byte("package main\n"), "internal/bad.go": []byte(tc.src)})
			if err != nil {
				t.Fatal(err)
			}
			if got.OK || got.Files != nil {
				t.Fatalf("a file that does not parse: got ok %v and files %v, want neither", got.OK, got.Files)
			}
			if len(got.Errors) == 0 {
				t.Fatal("got no errors")
			}
			e := got.Errors[0]
			if e.File != "internal/bad.go" || e.Line != tc.line || e.Column == 0 || !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("got %v, want internal/bad.go:%d:<column>: …%s…", e, tc.line, tc.msg)
			}
		})
	}
}

func TestFormatRefusesWhatABuildRefuses(t *testing.T) {
	t.Parallel()
	ok := []byte("package p\n")
	many := controllab.Files{}
	for i := range controllab.MaxFiles + 1 {
		many[strings.Repeat("a", i+1)+".go"] = ok
	}
	big := controllab.Files{}
	for i := range controllab.MaxBytes/controllab.MaxFileBytes + 1 {
		big[strings.Repeat("b", i+1)+".go"] = append([]byte("package p\n//"), make([]byte, controllab.MaxFileBytes-12)...)
	}
	for name, files := range map[string]controllab.Files{
		"a path outside the module": {"../escape.go": ok},
		"an absolute path":          {"/etc/x.go": ok},
		"a file that is not Go":     {"notes.txt": ok},
		"a file too large":          {"big.go": make([]byte, controllab.MaxFileBytes+1)},
		"too many files":            many,
		"too many bytes":            big,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := FormatFiles(files)
			if err == nil {
				t.Fatalf("got %+v, want an error", got)
			}
			if strings.Contains(name, "too") && !errors.Is(err, controllab.ErrTooLarge) {
				t.Errorf("got %v, want ErrTooLarge", err)
			}
		})
	}
}
