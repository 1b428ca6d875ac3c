package server

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The server's allow-list: what it may import besides the standard
// library. Anything else, above all the application layer and what is
// under it (app, session, class, cluster, console, stream, store, engine,
// install), it reaches through the interfaces it declares (app.go,
// classroom.go, signin.go).
var (
	// serverModules are the third-party modules it may import from.
	serverModules = []string{"github.com/gin-gonic/gin", "github.com/gorilla/websocket", "golang.org/x/text"}
	// serverImports are the oplab packages it may import: views that
	// cross to the browser as they are (board, frame, quiz), the JSON
	// convention (jsonconv) and the metrics it counts in.
	serverImports = []string{"internal/board", "internal/frame", "internal/jsonconv", "internal/metrics", "internal/quiz"}
	// serverLeaves are every oplab package the server may depend on,
	// through those: they stay leaves, so an allowed package cannot
	// bring in a forbidden one.
	serverLeaves = append([]string{"internal/locale", "internal/yamldoc"}, serverImports...)
)

// TestServerStaysAFrontEnd: the server imports only the standard library,
// serverModules and serverImports, and depends, even through another
// package, on no oplab package but serverLeaves.
func TestServerStaysAFrontEnd(t *testing.T) {
	imports := goList(t, `{{join .Imports "\n"}}`)
	if !slices.Contains(imports, "github.com/gin-gonic/gin") {
		t.Fatalf("go list named %d imports without gin: %v", len(imports), imports)
	}
	for _, imp := range nonStandard(t, imports) {
		rest, oplab := strings.CutPrefix(imp, "oplab.dev/oplab/")
		switch {
		case oplab && !slices.Contains(serverImports, rest):
			t.Errorf("internal/server imports %s: declare the interface it needs (app.go) and let internal/app/webapp implement it", imp)
		case !oplab && !slices.ContainsFunc(serverModules, func(m string) bool { return imp == m || strings.HasPrefix(imp, m+"/") }):
			t.Errorf("internal/server imports %s, of a module not in serverModules", imp)
		}
	}
	deps := goList(t, `{{join .Deps "\n"}}`)
	if len(deps) < 50 {
		t.Fatalf("go list listed %d dependencies, want the server's whole tree", len(deps))
	}
	for _, d := range deps {
		if rest, ok := strings.CutPrefix(d, "oplab.dev/oplab/"); ok && !slices.Contains(serverLeaves, rest) {
			t.Errorf("internal/server depends on %s through the packages it imports", d)
		}
	}
}

// goList lists what format says of the package in this directory.
func goList(t *testing.T, format string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", format, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// nonStandard are the packages of pkgs outside the standard library.
func nonStandard(t *testing.T, pkgs []string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-f", `{{if not .Standard}}{{.ImportPath}}{{end}}`}, pkgs...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return strings.Fields(string(out))
}
