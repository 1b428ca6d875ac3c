package clustertest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// RequireKind skips a test that runs kind clusters through another layer
// (an App on the kind provider) unless the kind tests are on, as
// NewKindProvider does, and holds the machine's kind lock for the rest of
// the test: its clusters are made one at a time with every other kind
// test's.
func RequireKind(t testing.TB) {
	t.Helper()
	NewKindProvider(t)
	lockKind(t)
}

// KindNodeMemory is the memory use of kind cluster name's control-plane
// container as the engine reports it, in MiB.
func KindNodeMemory(ctx context.Context, name string) (float64, error) {
	out, err := exec.CommandContext(ctx, "docker", "stats", "--no-stream", "--format", "{{.MemUsage}}", "oplab-"+name+"-control-plane").Output()
	if err != nil {
		return 0, err
	}
	usage, _, _ := strings.Cut(strings.TrimSpace(string(out)), " /")
	for unit, f := range map[string]float64{"GiB": 1024, "MiB": 1, "KiB": 1.0 / 1024} {
		if v, ok := strings.CutSuffix(usage, unit); ok {
			n, err := strconv.ParseFloat(v, 64)
			return n * f, err
		}
	}
	return 0, fmt.Errorf("unknown memory figure %q", usage)
}
