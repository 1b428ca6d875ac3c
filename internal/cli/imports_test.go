package cli

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestCLIStaysAFrontEnd: the CLI parses flags, calls the application
// layer and prints what it returns. It imports cobra, the application
// layer (internal/app, and internal/app/webapp to host the web server) and
// the packages of the views that layer returns; nothing below it (store,
// engine, cluster, install, course, console, the server ...) directly.
func TestCLIStaysAFrontEnd(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := strings.Fields(string(out))
	if !slices.Contains(imports, "github.com/spf13/cobra") {
		t.Fatalf("go list named %d imports without cobra: %v", len(imports), imports)
	}
	allowed := []string{
		"internal/app", "internal/app/webapp",
		// The views the application layer returns.
		"internal/session", "internal/quiz", "internal/class", "internal/board", "internal/locale", "internal/oplog",
	}
	for _, imp := range imports {
		rest, ok := strings.CutPrefix(imp, "oplab.dev/oplab/")
		if ok && !slices.Contains(allowed, rest) {
			t.Errorf("internal/cli imports %s: reach it through the application layer (internal/app)", imp)
		}
	}
}
