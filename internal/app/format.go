package app

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"strings"

	"oplab.dev/oplab/internal/controllab"
)

// Formatted is what gofmt makes of a learner's files: OK and every Go
// file formatted, or, when one does not parse, no file and the syntax
// errors on their lines, as a build reports the compiler's.
type Formatted struct {
	OK bool `json:"ok"`
	// Files are the .go files given, formatted, by path.
	Files map[string]string `json:"files,omitempty"`
	// Errors name the lines of the files that do not parse.
	Errors []controllab.CompileError `json:"errors,omitempty"`
}

// A session's gofmt requests are bounded: each parses up to the module's
// 1 MiB in the server's process, not the learner's cell, so their rate
// bounds what a flood of them costs the server.
const (
	FormatPerSecond = 2
	FormatBurst     = 10
)

// ErrFormatTooFast is a gofmt request over its session's rate.
var ErrFormatTooFast = errors.New("gofmt is asked for too fast")

// Format formats the learner's files of session id as FormatFiles does,
// at most FormatPerSecond a second (bursts of FormatBurst) a session.
func (a *App) Format(id string, files controllab.Files) (*Formatted, error) {
	if !a.formats.Allow(id) {
		return nil, fmt.Errorf("%w: at most %d a second; wait a moment", ErrFormatTooFast, FormatPerSecond)
	}
	return FormatFiles(files)
}

// FormatFiles formats the Go files of files as gofmt does; go.mod and
// go.sum are taken and left out of the answer. A file that does not parse
// is a result (OK false); a set of files past the module's bounds, or with
// a path outside it, is an error, as it is to a build.
func FormatFiles(files controllab.Files) (*Formatted, error) {
	if err := files.Check(); err != nil {
		return nil, err
	}
	out := &Formatted{Files: map[string]string{}}
	for _, name := range files.Names() {
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		src, errs, err := formatFile(name, files[name])
		if err != nil {
			return nil, err
		}
		out.Errors = append(out.Errors, errs...)
		out.Files[name] = string(src)
	}
	if len(out.Errors) > 0 {
		// All or nothing: a page puts back what it is given.
		out.Files = nil
		return out, nil
	}
	out.OK = true
	return out, nil
}

// formatFile formats one whole file: a fragment without its package
// clause is a syntax error here, as it is to the compiler (format.Source
// would format it as a fragment).
func formatFile(name string, src []byte) ([]byte, []controllab.CompileError, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	var list scanner.ErrorList
	switch {
	case errors.As(err, &list):
		errs := make([]controllab.CompileError, 0, len(list))
		for _, e := range list {
			errs = append(errs, controllab.CompileError{File: name, Line: e.Pos.Line, Column: e.Pos.Column, Msg: e.Msg})
		}
		return nil, errs, nil
	case err != nil:
		return nil, nil, fmt.Errorf("parse %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return nil, nil, fmt.Errorf("format %s: %w", name, err)
	}
	return buf.Bytes(), nil, nil
}
