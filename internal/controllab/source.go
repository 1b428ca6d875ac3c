package controllab

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// A learner's module is bounded: it is copied into their cell for every
// build, and a page holds it.
const (
	MaxFiles     = 100
	MaxFileBytes = 256 << 10
	MaxBytes     = 1 << 20
)

// Files is a learner's module: file contents by slash-separated path
// relative to the module's root.
type Files map[string][]byte

// ErrTooLarge is returned (wrapped) for a module past the bounds above.
var ErrTooLarge = errors.New("the module is too large")

// builds says which files a build takes: Go sources, go.mod and go.sum
// (replaced by the kit's), and nothing else (no embedded files: a
// controller embeds nothing, and a build reads only what it is given).
func builds(name string) bool {
	base := path.Base(name)
	return strings.HasSuffix(base, ".go") || base == "go.mod" || base == "go.sum"
}

// checkName refuses a path that is not a plain relative path inside the
// module: no "..", no absolute path, no hidden directory, no vendor tree.
func checkName(name string) error {
	if name == "" || !fs.ValidPath(name) || strings.Contains(name, `\`) {
		return fmt.Errorf("%q is not a file of the module", name)
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasPrefix(part, "_") || part == "vendor" || part == "testdata" {
			return fmt.Errorf("%q: directories and files whose names begin with . or _, vendor and testdata are not built", name)
		}
	}
	return nil
}

// Check validates f: names, what each file is, and the bounds.
func (f Files) Check() error {
	if len(f) > MaxFiles {
		return fmt.Errorf("%w: %d files, at most %d", ErrTooLarge, len(f), MaxFiles)
	}
	total := 0
	for name, b := range f {
		if err := checkName(name); err != nil {
			return err
		}
		if !builds(name) {
			return fmt.Errorf("%q: only .go files, go.mod and go.sum make up the module", name)
		}
		if len(b) > MaxFileBytes {
			return fmt.Errorf("%w: %s has %d bytes, at most %d", ErrTooLarge, name, len(b), MaxFileBytes)
		}
		total += len(b)
	}
	if total > MaxBytes {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, total, MaxBytes)
	}
	return nil
}

// Names returns f's paths, sorted.
func (f Files) Names() []string {
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Write writes f under dir, making directories as needed.
func (f Files) Write(dir string) error {
	if err := f.Check(); err != nil {
		return err
	}
	for _, name := range f.Names() {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ReadFS reads the module in fsys: every file a build takes, checked.
func ReadFS(fsys fs.FS) (Files, error) {
	f := Files{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name == "." {
			return nil
		}
		if d.IsDir() {
			if checkName(name) != nil {
				return fs.SkipDir
			}
			return nil
		}
		if !builds(name) || checkName(name) != nil {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file (a link?): the module's files must be its own", name)
		}
		if len(f) >= MaxFiles {
			return fmt.Errorf("%w: more than %d files", ErrTooLarge, MaxFiles)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		f[name] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	return f, f.Check()
}

// ReadDir reads the module in dir, as a learner edits it in the terminal.
func ReadDir(dir string) (Files, error) {
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return nil, fmt.Errorf("%s holds no go.mod: it is not the lab's module (oplab lab start writes one)", dir)
	}
	return ReadFS(os.DirFS(dir))
}

// Overlay returns base with the files of fsys laid over it: a lab's
// solution or a broken variant over its module.
func Overlay(base Files, fsys fs.FS) (Files, error) {
	top, err := ReadFS(fsys)
	if err != nil {
		return nil, err
	}
	out := Files{}
	for name, b := range base {
		out[name] = b
	}
	for name, b := range top {
		out[name] = b
	}
	return out, out.Check()
}
