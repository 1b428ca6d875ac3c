package main

import (
	"strings"
	"testing"
)

// The streams are what `go test -json` printed for small packages (times
// and elapsed fields left out).
func TestSummarize(t *testing.T) {
	tests := []struct {
		name       string
		stream     string
		wantFailed bool
		want       []string // in this order
		notWant    []string
	}{
		{
			name: "passes and skips",
			stream: `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestFast"}
{"Action":"output","Package":"a","Test":"TestFast","Output":"=== RUN   TestFast\n"}
{"Action":"output","Package":"a","Test":"TestFast","Output":"    fast_test.go:9: a log line of a passing test\n"}
{"Action":"output","Package":"a","Test":"TestFast","Output":"--- PASS: TestFast (0.00s)\n"}
{"Action":"pass","Package":"a","Test":"TestFast"}
{"Action":"run","Package":"a","Test":"TestCluster"}
{"Action":"output","Package":"a","Test":"TestCluster","Output":"=== RUN   TestCluster\n"}
{"Action":"output","Package":"a","Test":"TestCluster","Output":"    cluster_test.go:20: needs the embedded control plane; -short\n"}
{"Action":"output","Package":"a","Test":"TestCluster","Output":"--- SKIP: TestCluster (0.00s)\n"}
{"Action":"skip","Package":"a","Test":"TestCluster"}
{"Action":"run","Package":"a","Test":"TestBrowser"}
{"Action":"output","Package":"a","Test":"TestBrowser","Output":"    browser_test.go:31: needs Chromium; -short\n"}
{"Action":"output","Package":"a","Test":"TestBrowser","Output":"--- SKIP: TestBrowser (0.00s)\n"}
{"Action":"skip","Package":"a","Test":"TestBrowser"}
{"Action":"run","Package":"a","Test":"TestOther"}
{"Action":"output","Package":"a","Test":"TestOther","Output":"    other_test.go:40: needs the embedded control plane; -short\n"}
{"Action":"skip","Package":"a","Test":"TestOther"}
{"Action":"output","Package":"a","Output":"PASS\n"}
{"Action":"output","Package":"a","Output":"ok  \ta\t0.012s\n"}
{"Action":"pass","Package":"a"}
{"Action":"start","Package":"b"}
{"Action":"output","Package":"b","Output":"?   \tb\t[no test files]\n"}
{"Action":"skip","Package":"b"}
`,
			want: []string{"ok  \ta\t0.012s\n", "?   \tb\t[no test files]\n",
				"3 tests skipped, by reason:\n", "     2  needs the embedded control plane; -short\n", "     1  needs Chromium; -short\n"},
			notWant: []string{"PASS", "a log line of a passing test", "=== RUN", "--- SKIP"},
		},
		{
			name: "a failed subtest",
			stream: `{"Action":"run","Package":"a","Test":"TestT"}
{"Action":"output","Package":"a","Test":"TestT","Output":"=== RUN   TestT\n"}
{"Action":"run","Package":"a","Test":"TestT/sub"}
{"Action":"output","Package":"a","Test":"TestT/sub","Output":"    t_test.go:7: got 1, want 2\n"}
{"Action":"output","Package":"a","Test":"TestT/sub","Output":"    --- FAIL: TestT/sub (0.00s)\n"}
{"Action":"fail","Package":"a","Test":"TestT/sub"}
{"Action":"output","Package":"a","Test":"TestT","Output":"--- FAIL: TestT (0.00s)\n"}
{"Action":"fail","Package":"a","Test":"TestT"}
{"Action":"output","Package":"a","Output":"FAIL\n"}
{"Action":"output","Package":"a","Output":"FAIL\ta\t0.010s\n"}
{"Action":"fail","Package":"a"}
`,
			wantFailed: true,
			want:       []string{"t_test.go:7: got 1, want 2\n", "--- FAIL: TestT/sub", "--- FAIL: TestT (0.00s)\n", "FAIL\ta\t0.010s\n", "0 tests skipped\n"},
			notWant:    []string{"=== RUN"},
		},
		{
			name: "a build failure",
			stream: `{"ImportPath":"a [a.test]","Action":"build-output","Output":"# a [a.test]\n"}
{"ImportPath":"a [a.test]","Action":"build-output","Output":"a_test.go:3:1: undefined: x\n"}
{"ImportPath":"a [a.test]","Action":"build-fail"}
{"Action":"start","Package":"a"}
{"Action":"output","Package":"a","Output":"FAIL\ta [build failed]\n"}
{"Action":"fail","Package":"a","FailedBuild":"a [a.test]"}
`,
			wantFailed: true,
			want:       []string{"a_test.go:3:1: undefined: x\n", "FAIL\ta [build failed]\n"},
		},
		{
			name: "a crash leaves a test unfinished",
			stream: `{"Action":"run","Package":"a","Test":"TestHang"}
{"Action":"output","Package":"a","Test":"TestHang","Output":"panic: test timed out after 1s\n"}
{"Action":"output","Package":"a","Output":"FAIL\ta\t1.010s\n"}
{"Action":"fail","Package":"a"}
`,
			wantFailed: true,
			want:       []string{"FAIL\ta\t1.010s\n", "--- a TestHang did not finish:\npanic: test timed out after 1s\n"},
		},
		{
			// A wall's tests that skipped (walltest.Require's message) are
			// named once more at the end, one line for each wall.
			name: "walls not tested",
			stream: `{"Action":"run","Package":"oplab.dev/oplab/internal/cell","Test":"TestForwardAndJoin/user-0"}
{"Action":"output","Package":"oplab.dev/oplab/internal/cell","Test":"TestForwardAndJoin/user-0","Output":"    cell_test.go:40: wall not tested: the cell (bubblewrap namespaces around a cluster): bwrap: setting up uid map: Permission denied (OPLAB_WALLS=untested)\n"}
{"Action":"skip","Package":"oplab.dev/oplab/internal/cell","Test":"TestForwardAndJoin/user-0"}
{"Action":"run","Package":"oplab.dev/oplab/internal/cluster","Test":"TestCellWalls"}
{"Action":"output","Package":"oplab.dev/oplab/internal/cluster","Test":"TestCellWalls","Output":"    cell_test.go:186: wall not tested: the cell (bubblewrap namespaces around a cluster): bwrap: setting up uid map: Permission denied (OPLAB_WALLS=untested)\n"}
{"Action":"skip","Package":"oplab.dev/oplab/internal/cluster","Test":"TestCellWalls"}
{"Action":"run","Package":"oplab.dev/oplab/internal/budget","Test":"TestMemoryCeiling"}
{"Action":"output","Package":"oplab.dev/oplab/internal/budget","Test":"TestMemoryCeiling","Output":"    budget_test.go:81: wall not tested: the budget (a cell's control group): no control group can be made for a cell: read-only file system (OPLAB_WALLS=untested)\n"}
{"Action":"skip","Package":"oplab.dev/oplab/internal/budget","Test":"TestMemoryCeiling"}
{"Action":"run","Package":"a","Test":"TestCluster"}
{"Action":"output","Package":"a","Test":"TestCluster","Output":"    cluster_test.go:20: needs the embedded control plane; -short\n"}
{"Action":"skip","Package":"a","Test":"TestCluster"}
`,
			want: []string{"4 tests skipped, by reason:\n",
				"WALLS NOT TESTED (2): this run does not show that they hold\n",
				"  the budget (a cell's control group): 1 tests skipped (budget.TestMemoryCeiling): no control group can be made for a cell: read-only file system (OPLAB_WALLS=untested)\n",
				"  the cell (bubblewrap namespaces around a cluster): 2 tests skipped (cell.TestForwardAndJoin/user-0, cluster.TestCellWalls): bwrap: setting up uid map: Permission denied (OPLAB_WALLS=untested)\n"},
		},
		{
			name: "no wall skipped, no walls' lines",
			stream: `{"Action":"run","Package":"a","Test":"TestCluster"}
{"Action":"output","Package":"a","Test":"TestCluster","Output":"    cluster_test.go:20: needs the embedded control plane; -short\n"}
{"Action":"skip","Package":"a","Test":"TestCluster"}
`,
			want:    []string{"1 tests skipped, by reason:\n"},
			notWant: []string{"WALLS"},
		},
		{
			name:   "lines that are not events pass through",
			stream: "go: warning: \"./nothing/...\" matched no packages\n",
			want:   []string{"go: warning: \"./nothing/...\" matched no packages\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			failed, err := summarize(strings.NewReader(tt.stream), &out)
			if err != nil {
				t.Fatal(err)
			}
			if failed != tt.wantFailed {
				t.Errorf("failed: got %v, want %v", failed, tt.wantFailed)
			}
			got := out.String()
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %q after what came before; got:\n%s", w, got)
				}
				rest = rest[i+len(w):]
			}
			for _, nw := range tt.notWant {
				if strings.Contains(got, nw) {
					t.Errorf("output contains %q; got:\n%s", nw, got)
				}
			}
		})
	}
}

func TestSkipReason(t *testing.T) {
	tests := []struct {
		lines []string
		want  string
	}{
		{[]string{"    kind.go:37: needs a kind cluster; -short\n"}, "needs a kind cluster; -short"},
		{[]string{"    x_test.go:5: a log line\n", "    x_test.go:6: jq is not installed\n", "\n"}, "jq is not installed"},
		{nil, "(no reason given)"},
	}
	for _, tt := range tests {
		if got := skipReason(tt.lines); got != tt.want {
			t.Errorf("skipReason(%q): got %q, want %q", tt.lines, got, tt.want)
		}
	}
}
