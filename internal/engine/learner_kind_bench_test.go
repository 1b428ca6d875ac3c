package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/controllab"
	"oplab.dev/oplab/internal/lab"
)

// BenchmarkControllerEditOnKind times what a learner of write-reconciler
// waits for on kind when they edit the controller that runs: from pressing
// Build and run with a file changed by a line to their new controller's
// "Starting workers" in the operator log (s-edit-p50, s-edit-p99): the
// build, a pod of the cluster, then the controller's Deployment rolled to
// a new pod. capped: the node under its CPU cap (budget.Kind's core) all
// along; burst: the cap lifted for the build and the roll's update and put
// back when they return, as session.Manager.Build does while one of its
// bursts is free. The cache is warm (the solution built once before).
//
//	OPLAB_KIND_TEST=1 go test -run '^$' -bench '^BenchmarkControllerEditOnKind$' -benchtime 5x -count 1 -timeout 40m ./internal/engine/
//
// (after `eval "$(make -s kind-env)"` and `make images`).
func BenchmarkControllerEditOnKind(b *testing.B) {
	c, e, l, ctx := writeReconcilerOnKind(b, 40*time.Minute)
	// The solution runs: built once, its cache warm.
	if err := e.runController(ctx, l.ID, &lab.RunController{Module: "solution"}); err != nil {
		b.Fatal(err)
	}
	k, err := controllab.FindKit(clustertest.BinDir(b))
	if err != nil {
		b.Fatal(err)
	}
	files, err := controllab.LabModule(l.ID, "solution", nil, k)
	if err != nil {
		b.Fatal(err)
	}
	const file = "internal/controller/webapp_controller.go"
	edits := 0
	edit := func(b *testing.B, burst bool) time.Duration {
		b.Helper()
		edits++
		edited := controllab.Files{}
		for n, d := range files {
			edited[n] = d
		}
		edited[file] = append(slices.Clone(files[file]), fmt.Sprintf("\n// edit %d\n", edits)...)
		// The log is read from the second the press is in: the controller
		// before's lines are a second older.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
		start := time.Now()
		since := start.Truncate(time.Second)
		if burst {
			if lifted, err := c.Provider.Unsettle(ctx, c.Name); err != nil || !lifted {
				b.Fatalf("lift the node's cap: %v, %v", lifted, err)
			}
		}
		res, err := e.BuildAndRun(ctx, l, edited, true)
		if burst {
			if err := c.Provider.Settle(ctx, c.Name); err != nil {
				b.Fatal(err)
			}
		}
		if err != nil {
			b.Fatal(err)
		}
		if !res.OK {
			b.Fatalf("the edited solution does not build:\n%s", res.Output)
		}
		err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			lines, err := e.logSource().Lines(ctx, since)
			return err == nil && slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "Starting workers") }), nil
		})
		if err != nil {
			b.Fatalf("the edited controller did not start its workers: %v", err)
		}
		return time.Since(start)
	}
	for _, burst := range []bool{false, true} {
		name := map[bool]string{false: "capped", true: "burst"}[burst]
		b.Run(name, func(b *testing.B) {
			var took []time.Duration
			for range b.N {
				took = append(took, edit(b, burst))
			}
			slices.Sort(took)
			q := func(p float64) float64 {
				i := int(p*float64(len(took))+0.999999) - 1
				return took[max(i, 0)].Seconds()
			}
			b.ReportMetric(q(0.5), "s-edit-p50")
			b.ReportMetric(q(0.99), "s-edit-p99")
			b.ReportMetric(0, "ns/op")
		})
	}
}
