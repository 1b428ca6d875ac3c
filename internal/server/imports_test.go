package server

import (
	"os/exec"
	"strings"
	"testing"
)

// TestServerStaysAFrontEnd: the server never depends, even through another
// package, on the parts below the application layer.
func TestServerStaysAFrontEnd(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list -deps listed %d packages, want the server's whole tree", len(deps))
	}
	for _, d := range deps {
		// stream: a live stream's frame reaches the server as package
		// frame, which both share; the hub stays below the application.
		for _, banned := range []string{"cluster", "engine", "operator/install", "store", "stream"} {
			if d == "oplab.dev/oplab/internal/"+banned || strings.HasPrefix(d, "oplab.dev/oplab/internal/"+banned+"/") {
				t.Errorf("internal/server depends on %s", d)
			}
		}
	}
}
