package clustertest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Main runs a package's tests with a temporary directory of their own and
// then checks that no cluster process started under it outlived the tests:
// every test must stop what it started. Orphans are reported, killed, and
// fail the run. Use it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(clustertest.Main(m)) }
//
// The after functions run once the tests are done, before the check for
// processes left over: servers a test binary shares between its tests
// (pgtest.Stop) stop there.
func Main(m *testing.M, after ...func() error) int {
	root, err := os.MkdirTemp("", "oplab-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "clustertest:", err)
		return 1
	}
	// t.TempDir and os.MkdirTemp read TMPDIR: every cluster of the tests
	// lives under root.
	os.Setenv("TMPDIR", root)
	code := m.Run()
	for _, f := range after {
		if err := f(); err != nil {
			fmt.Fprintln(os.Stderr, "clustertest:", err)
			code = max(code, 1)
		}
	}
	if orphans := orphansUnder(root); len(orphans) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d cluster processes outlived the tests:\n", len(orphans))
		for _, o := range orphans {
			fmt.Fprintf(os.Stderr, "  pid %d: %s\n", o.pid, o.cmd)
			_ = syscall.Kill(o.pid, syscall.SIGKILL)
		}
		code = 1
	}
	os.RemoveAll(root)
	return code
}

type orphan struct {
	pid int
	cmd string
}

// orphansUnder finds live processes whose OPLAB_CLUSTER_DIR lies under root.
func orphansUnder(root string) []orphan {
	entries, _ := os.ReadDir("/proc")
	var out []orphan
	prefix := []byte("OPLAB_CLUSTER_DIR=" + root + string(filepath.Separator))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(environ, prefix) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && bytes.Contains(stat, []byte(") Z ")) {
			continue // exited; only the parent's wait is missing
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, orphan{pid, strings.ReplaceAll(string(cmd), "\x00", " ")})
	}
	return out
}
