package webapp

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// webappImports are the packages internal/app/webapp may import besides
// the standard library: no third-party module, and of oplab's:
var webappImports = []string{
	// the two sides it joins: the application layer, and the server
	// whose interfaces it implements;
	"internal/app", "internal/server",
	// the views and errors the App's methods speak in (a learner's module
	// is a controllab.Files);
	"internal/session", "internal/class", "internal/quiz", "internal/locale", "internal/controllab",
	// the views that cross to the browser as the server sends them;
	"internal/board", "internal/frame", "internal/jsonconv",
	// the parts of the App's Runtime it calls on: the console's runner,
	// the stream hub, the metrics;
	"internal/console", "internal/stream", "internal/metrics",
	// a lab's page rendered, the YAML editor's document, the site;
	"internal/lesson", "internal/yamldoc", "web",
	// store.ErrNotFound only (errors.go): what an App method returns for
	// a session the store does not have.
	"internal/store",
}

// TestWebappImportsOnlyItsAllowList: the web adapter maps the server's
// calls onto the App; what the App is made of (cluster, engine, install,
// admission, the course's files …) it reaches only through the App.
func TestWebappImportsOnlyItsAllowList(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports := strings.Fields(string(out))
	if !slices.Contains(imports, "oplab.dev/oplab/internal/server") {
		t.Fatalf("go list named %d imports without the server: %v", len(imports), imports)
	}
	out, err = exec.Command("go", append([]string{"list", "-f", `{{if not .Standard}}{{.ImportPath}}{{end}}`}, imports...)...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if rest, ok := strings.CutPrefix(imp, "oplab.dev/oplab/"); !ok || !slices.Contains(webappImports, rest) {
			t.Errorf("internal/app/webapp imports %s: reach it through internal/app, or add it to webappImports saying why", imp)
		}
	}
}
