package server

import (
	"context"
	"errors"
	"fmt"
	"go/format"
	"go/scanner"
	"path"
	"sort"
	"strings"
)

// fakeCode is Code in memory: a module of two Go files and go.mod for
// any session, builds that compile, and the standard library's gofmt. It
// records the calls it answers.
type fakeCode struct{ fakeCalls }

// fakeController is the module's controller as the scaffold has it.
const fakeController = `package controller

import "context"

// Reconcile makes the WebApp's children match its spec.
func Reconcile(ctx context.Context, name string) (int, error) {
	var n int = 0x1F // a comment
	s := "a \"string\""
	r := 'x'
	raw := ` + "`raw\nstring`" + `
	_ = len(s) + len(raw) + int(r)
	return n, nil
}
`

func (f *fakeCode) Module(_ context.Context, id string) (map[string]string, error) {
	f.record("module " + id)
	return map[string]string{
		"go.mod":      "module example.com/webapp\n",
		"cmd/main.go": "package main\n\nfunc main() {}\n",
		"internal/controller/webapp_controller.go": fakeController,
	}, nil
}

func (f *fakeCode) Build(_ context.Context, id string, files map[string]string, run bool, _ func(Update)) (any, error) {
	f.record(fmt.Sprintf("build %s %d files run=%v", id, len(files), run))
	return map[string]any{"ok": true, "ran": run, "tookMs": 5}, nil
}

// Format formats each .go file with go/format; a file that does not parse
// answers its errors on their lines, and no file.
func (f *fakeCode) Format(_ string, files map[string]string) (any, error) {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	f.record("format " + strings.Join(names, " "))
	out := map[string]string{}
	var errs []map[string]any
	for _, name := range names {
		if path.Ext(name) != ".go" {
			continue
		}
		src, err := format.Source([]byte(files[name]))
		var list scanner.ErrorList
		switch {
		case errors.As(err, &list):
			for _, e := range list {
				errs = append(errs, map[string]any{"file": name, "line": e.Pos.Line, "column": e.Pos.Column, "msg": e.Msg})
			}
		case err != nil:
			return nil, err
		}
		out[name] = string(src)
	}
	if len(errs) > 0 {
		return map[string]any{"ok": false, "errors": errs}, nil
	}
	return map[string]any{"ok": true, "files": out}, nil
}
