package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/engine"
)

func TestLabSelftestArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"lab", "selftest"}, "give lab ids or --all"},
		{[]string{"lab", "selftest", "--all", "rbac"}, "give lab ids or --all"},
		{[]string{"lab", "selftest", "-o", "yaml", "rbac"}, `unknown output format "yaml"`},
		{[]string{"lab", "selftest", "no-such-lab"}, "load lab no-such-lab"},
	}
	for _, tt := range tests {
		_, err := runLab(t, append(tt.args, "--data-dir", t.TempDir())...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got error %v, want one containing %q", tt.args, err, tt.want)
		}
	}
}

// TestLabSelftestRuns self-tests the shortest shipped lab through the
// command, on a cluster it creates and deletes.
func TestLabSelftestRuns(t *testing.T) {
	t.Parallel()
	out, err := runLab(t, "lab", "selftest", "switchover", "-o", "json", "--data-dir", t.TempDir(), "--bin-dir", clustertest.BinDir(t))
	if err != nil {
		t.Fatalf("selftest: %v\n%s", err, out)
	}
	var reps []engine.SelfTestReport
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	if len(reps) != 1 || !reps[0].Passed || len(reps[0].Exercises) != 2 {
		t.Errorf("got %+v, want one passed lab with 2 exercises", reps)
	}
}
