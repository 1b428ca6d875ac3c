package controllab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"oplab.dev/oplab/internal/cluster"
)

// Workshop is what a build needs of the learner's cluster's provider:
// *cluster.Provider on providers whose clusters run host processes.
type Workshop interface {
	Workspace(ctx context.Context, cluster string) (string, error)
	Share(ctx context.Context, cluster, src, dst string) error
	Run(ctx context.Context, cluster string, c cluster.Command) (*os.ProcessState, error)
	Confine(ctx context.Context, cluster string, c cluster.Sandbox, prog string, args []string) (string, []string, error)
}

// Builder builds a learner's module in their cluster's cell: the files
// are theirs and so is the code, so the build runs where their cluster
// does, with no network but the cell's own, and their budget's memory and
// CPU, in a sandbox inside the cell that sees the kit (read-only), their
// module (read-only), their build cache and where the program goes, and
// nothing else of the cluster's.
type Builder struct {
	Kit     Kit
	Cells   Workshop
	Cluster string
	// Timeout bounds one build; DefaultBuildTimeout when zero.
	Timeout time.Duration
}

// DefaultBuildTimeout bounds a build: a warm build of the lab's module
// takes seconds; a cold one, on a loaded machine, under a minute.
const DefaultBuildTimeout = 3 * time.Minute

// maxOutput bounds the compiler's output kept of one build.
const maxOutput = 64 << 10

// Build is one build's result.
type Build struct {
	// OK: the module built, and Binary is the program, in the cluster's
	// workspace.
	OK     bool
	Binary string
	// Errors are the compiler's messages that name a line of the module.
	Errors []CompileError
	// Output is what the go command printed (at most maxOutput bytes).
	Output string
	Took   time.Duration
}

// CompileError is one message of the compiler, on its line.
type CompileError struct {
	// File is the module-relative, slash-separated path.
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column,omitempty"`
	Msg    string `json:"msg"`
}

func (e CompileError) String() string {
	if e.Column > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Paths in the cluster's workspace.
const (
	srcDir   = "src"
	cacheDir = "gocache"
	binDir   = "bin"
	tmpDir   = "tmp"
	// Program is the built controller's name in the workspace's bin.
	Program = "controller"
)

// Build copies files into the workspace and builds them there. A module
// that does not compile is no error: Build reports it (OK false, Errors).
// An error is a build that could not run (no kit, no cell, the time
// limit).
func (b Builder) Build(ctx context.Context, files Files) (*Build, error) {
	start := time.Now()
	if err := files.Check(); err != nil {
		return nil, err
	}
	mod, err := b.Kit.module()
	if err != nil {
		return nil, err
	}
	src := Files{}
	for name, data := range files {
		src[name] = data
	}
	for name, data := range mod {
		src[name] = data
	}
	ws, err := b.Cells.Workspace(ctx, b.Cluster)
	if err != nil {
		return nil, err
	}
	if err := replaceDir(filepath.Join(ws, srcDir), src.Write); err != nil {
		return nil, fmt.Errorf("copy the module into the cluster: %w", err)
	}
	for _, d := range []string{binDir, tmpDir} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			return nil, err
		}
	}
	cache := filepath.Join(ws, cacheDir)
	if _, err := os.Stat(cache); errors.Is(err, os.ErrNotExist) {
		if err := b.Cells.Share(ctx, b.Cluster, b.Kit.Cache(), cache); err != nil {
			return nil, fmt.Errorf("the warm build cache: %w", err)
		}
	}
	if err := b.Kit.Preload(); err != nil {
		return nil, err
	}
	bin := filepath.Join(ws, binDir, Program)
	path, args, err := b.Cells.Confine(ctx, b.Cluster, cluster.Sandbox{
		ReadOnly: []string{b.Kit.Dir, filepath.Join(ws, srcDir)},
		Writable: []string{cache, filepath.Join(ws, binDir)},
		Tmp:      filepath.Join(ws, tmpDir),
		Chdir:    filepath.Join(ws, srcDir),
	}, b.Kit.Go(), []string{"build", "-trimpath", "-ldflags=-s -w", "-o", bin + ".new", "."})
	if err != nil {
		return nil, err
	}
	timeout := b.Timeout
	if timeout == 0 {
		timeout = DefaultBuildTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := &limitedBuffer{max: maxOutput}
	_, err = b.Cells.Run(ctx, b.Cluster, cluster.Command{
		Path: path, Args: args,
		Env:    b.env(ws),
		Stdout: out, Stderr: out,
	})
	res := &Build{Output: out.String(), Took: time.Since(start)}
	// *exec.ExitError where the build is a process here, a
	// *cluster.ExitError where it is a pod.
	var exit interface{ ExitCode() int }
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("the build did not finish within %s", timeout)
	case errors.As(err, &exit):
		res.Errors = ParseErrors(res.Output)
		return res, nil
	case err != nil:
		return nil, fmt.Errorf("build: %w", err)
	}
	// The build's user owns bin: what is there must be the program it
	// wrote, not a link to a file of this machine's.
	if fi, err := os.Lstat(bin + ".new"); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("the build wrote no program (%v)", err)
	}
	if err := os.Rename(bin+".new", bin); err != nil {
		return nil, err
	}
	res.OK, res.Binary = true, bin
	return res, nil
}

// env is the whole environment of a build: the kit's toolchain and
// modules, the workspace's cache, nothing from the network, no cgo, no
// toolchain switch, no settings file of anyone's.
func (b Builder) env(ws string) []string {
	return []string{
		"PATH=" + filepath.Join(b.Kit.GoRoot(), "bin") + ":/usr/bin:/bin",
		"HOME=/tmp",
		"TMPDIR=/tmp",
		"GOROOT=" + b.Kit.GoRoot(),
		"GOMODCACHE=" + b.Kit.ModCache(),
		"GOCACHE=" + filepath.Join(ws, cacheDir),
		"GOPATH=/tmp/gopath",
		"GOFLAGS=-mod=readonly",
		"GOPROXY=off",
		"GOSUMDB=off",
		"GOTOOLCHAIN=local",
		"GOWORK=off",
		"GOENV=off",
		"GOTELEMETRY=off",
		"CGO_ENABLED=0",
	}
}

// replaceDir makes dir anew with write, through a sibling directory, so
// that a build never sees half a module.
func replaceDir(dir string, write func(string) error) error {
	tmp := dir + ".new"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := write(tmp); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// errLine is one message of the go command that names a file's line:
// "internal/controller/x.go:12:5: undefined: y", paths as go build -C
// prints them (relative, maybe with ./).
var errLine = regexp.MustCompile(`^(?:\./)?([^\s:]+\.go):(\d+)(?::(\d+))?: (.+)$`)

// ParseErrors returns the messages of out that name a line of a file.
func ParseErrors(out string) []CompileError {
	var errs []CompileError
	for _, l := range strings.Split(out, "\n") {
		m := errLine.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		errs = append(errs, CompileError{File: m[1], Line: line, Column: col, Msg: m[4]})
	}
	return errs
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	bytes.Buffer
	max       int
	truncated bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.Len(); room < len(p) {
		l.truncated = true
		if room > 0 {
			l.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return l.Buffer.Write(p)
}

func (l *limitedBuffer) String() string {
	if l.truncated {
		return l.Buffer.String() + "\n… (the rest of the output is left out)"
	}
	return l.Buffer.String()
}

// Built returns the module last built in workspace ws (the files of the
// learner's last build, which Build keeps there).
func Built(ws string) (Files, error) { return ReadDir(filepath.Join(ws, srcDir)) }
