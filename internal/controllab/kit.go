package controllab

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"oplab.dev/oplab/labs"
)

// KitDir is where `make kit` puts the build kit, under oplab's bin
// directory (which every cell sees, read-only). Its name begins with _
// so that the go command, asked for oplab's ./..., does not take the kit's
// module cache and toolchain sources for packages of oplab.
const KitDir = "_kit"

// Kit is the build kit (hack/build-kit.sh): the Go toolchain that builds
// oplab, a module cache with every module the lab's module needs, that
// module's go.mod and go.sum, and a build cache warmed with the reference
// solution.
type Kit struct {
	Dir string
}

// FindKit returns the kit in binDir, or an error that says how to make it.
func FindKit(binDir string) (Kit, error) {
	k := Kit{Dir: filepath.Join(binDir, KitDir)}
	if _, err := os.Stat(filepath.Join(k.Dir, "stamp")); err != nil {
		return Kit{}, fmt.Errorf("the build kit is missing or incomplete in %s: run `make kit`", k.Dir)
	}
	return k, nil
}

// Go is the kit's go command.
func (k Kit) Go() string { return filepath.Join(k.Dir, "go", "bin", "go") }

// GoRoot, ModCache and Cache are the kit's toolchain, module cache and warm
// build cache.
func (k Kit) GoRoot() string   { return filepath.Join(k.Dir, "go") }
func (k Kit) ModCache() string { return filepath.Join(k.Dir, "mod") }
func (k Kit) Cache() string    { return filepath.Join(k.Dir, "cache") }

// moduleFiles are the files of the lab's module that the kit decides: a
// learner's copies are replaced by these, so that every build uses the
// modules prepared offline.
var moduleFiles = []string{"go.mod", "go.sum"}

// module returns the kit's go.mod and go.sum by name.
func (k Kit) module() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, f := range moduleFiles {
		b, err := os.ReadFile(filepath.Join(k.Dir, "module", f))
		if err != nil {
			return nil, fmt.Errorf("the build kit: %w (run `make kit`)", err)
		}
		out[f] = b
	}
	return out, nil
}

// WriteModule writes a module for the learner to edit into dir: the files
// of scaffold (a lab's _module tree), then the kit's go.mod and go.sum. It
// refuses a dir that holds anything: nothing of the learner's is
// overwritten.
func WriteModule(dir string, scaffold fs.FS, k Kit) error {
	if err := CheckNewDir(dir); err != nil {
		return err
	}
	mod, err := k.module()
	if err != nil {
		return err
	}
	files, err := ReadFS(scaffold)
	if err != nil {
		return err
	}
	for name, b := range mod {
		files[name] = b
	}
	return files.Write(dir)
}

// LabModule returns module of lab id as the self-test builds it: the
// scaffold ("scaffold"), the reference solution ("solution") or a broken
// variant (its name), laid over the scaffold; then the variants named in
// with, in order (a lab whose learner repairs a controller ships each
// repair as a variant of one file); then the kit's go.mod and go.sum.
func LabModule(id, module string, with []string, k Kit) (Files, error) {
	layers, err := labs.Scaffold(id)
	if err != nil {
		return nil, err
	}
	switch module {
	case "scaffold":
	case "solution":
		top, err := labs.Solution(id)
		if err != nil {
			return nil, err
		}
		layers = append(layers, top)
	default:
		with = append([]string{module}, with...)
	}
	for _, v := range with {
		top, err := labs.Variant(id, v)
		if err != nil {
			return nil, err
		}
		layers = append(layers, top)
	}
	files := Files{}
	for _, l := range layers {
		if files, err = Overlay(files, l); err != nil {
			return nil, err
		}
	}
	mod, err := k.module()
	if err != nil {
		return nil, err
	}
	for name, b := range mod {
		files[name] = b
	}
	return files, files.Check()
}

// CheckNewDir refuses a dir that holds anything: where a module is
// written, nothing of the learner's may be.
func CheckNewDir(dir string) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("%s is not empty: choose a new directory for the lab's module", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// WriteNew writes f into dir, which must be new or empty: nothing of the
// learner's is overwritten.
func (f Files) WriteNew(dir string) error {
	if err := CheckNewDir(dir); err != nil {
		return err
	}
	return f.Write(dir)
}

// Preload asks the kernel to read the files of the kit a build reads into
// the page cache, for this process: the server's, not a cell's. A page of
// the page cache is charged to the memory of the control group that first
// reads it, and stays charged there. Without Preload, the first build
// after the kit's pages were reclaimed (by memory pressure, or by a
// machine's proactive reclaim of pages cold for a minute) reads them in
// from a learner's cell and charges them to it: the kit's build cache
// alone is about 860 MB, more than a cell's ceiling, and the build thrashes
// against it (measured: a link not done in 3 minutes, its cell at its
// 768 MiB with 290,000 major faults). Preloaded, the kit is shared as the
// cluster's programs are: paid once, by the machine, whoever builds.
//
// It costs an open and a posix_fadvise per file, and reads what is not in
// memory; so it runs at most once every preloadEvery for a kit: a build
// reads what it needs of the kit, which keeps it warm for the next.
func (k Kit) Preload() error {
	preloads.mu.Lock()
	defer preloads.mu.Unlock()
	if time.Since(preloads.at[k.Dir]) < preloadEvery {
		return nil
	}
	if err := k.preload(); err != nil {
		return err
	}
	if preloads.at == nil {
		preloads.at = map[string]time.Time{}
	}
	preloads.at[k.Dir] = time.Now()
	return nil
}

// preload is Preload, every time.
func (k Kit) preload() error {
	for _, dir := range []string{k.Cache(), k.ModCache(), k.GoRoot()} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && d.Name() == "testdata":
				return fs.SkipDir
			case !d.Type().IsRegular() || strings.HasSuffix(d.Name(), "_test.go"):
				return nil
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_WILLNEED)
		})
		if err != nil {
			return fmt.Errorf("preload the build kit: %w", err)
		}
	}
	return nil
}

// preloadEvery is how often Preload reads a kit in again: well inside the
// minute after which proactive reclaim takes cold pages.
const preloadEvery = 30 * time.Second

// preloads is when each kit, by directory, was last preloaded.
var preloads struct {
	mu sync.Mutex
	at map[string]time.Time
}
