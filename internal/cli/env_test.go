package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyTheCLIReadsTheEnvironment: configuration flows in explicitly.
// oplab reads its environment in internal/cli's config and nowhere below
// it: libraries take their settings as fields of options structs, so a
// setting has one owner, the help names it, and a test sets it without
// touching the process. The scan covers every non-test Go file of this
// module (not testdata, nor the other modules under hack/tools).
func TestOnlyTheCLIReadsTheEnvironment(t *testing.T) {
	// envReaders may read the environment, beside cmd/ (each binary's main):
	// the CLI's configuration, and test helpers reading their test-only
	// variables. Paths are from the module's root; a folder ends in /.
	envReaders := []string{
		// The one place oplab reads its settings (settings, config.go).
		"internal/cli/config.go",
		// OPLAB_CHROMIUM and OPLAB_SCREENSHOTS: which Chromium the browser
		// tests drive and where they keep screenshots.
		"internal/browsertest/browsertest.go",
		// OPLAB_BIN, the OPLAB_KIND_* gates and the kind tests' node image and
		// base config (KindEnv), for tests that build a provider themselves.
		"internal/cluster/clustertest/",
		// OPLAB_WALLS and CI: whether a wall test that cannot make its wall
		// may skip (walltest.MaySkip), the one rule for every wall test.
		"internal/walltest/walltest.go",
	}
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	used := map[string]bool{}
	scanned := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" || rel == "cmd" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		scanned++
		reads := envReads(fset, f)
		if len(reads) == 0 {
			return nil
		}
		i := slices.IndexFunc(envReaders, func(a string) bool { return a == rel || strings.HasSuffix(a, "/") && strings.HasPrefix(rel, a) })
		if i >= 0 {
			used[envReaders[i]] = true
			return nil
		}
		for _, r := range reads {
			t.Errorf("%s:%s: read it in internal/cli/config.go and pass it down as a field of an options struct", rel, r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The scan would pass on no files, or on a parser that found nothing.
	if scanned < 100 {
		t.Fatalf("scanned %d Go files, want the module's (more than 100)", scanned)
	}
	for _, a := range envReaders {
		if !used[a] {
			t.Errorf("%s reads no environment: take it off envReaders", a)
		}
	}
}

// envReads returns where f reads the environment (os.Getenv, os.LookupEnv,
// syscall.Getenv), as "line: call".
func envReads(fset *token.FileSet, f *ast.File) []string {
	names := map[string]string{} // local name → package
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if p != "os" && p != "syscall" {
			continue
		}
		name := p
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = p
	}
	var reads []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok || names[x.Name] == "" {
			return true
		}
		if sel.Sel.Name == "Getenv" || sel.Sel.Name == "LookupEnv" {
			reads = append(reads, strconv.Itoa(fset.Position(sel.Pos()).Line)+": "+names[x.Name]+"."+sel.Sel.Name)
		}
		return true
	})
	return reads
}
