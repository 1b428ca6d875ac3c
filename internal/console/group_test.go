package console

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/walltest"
)

// A command of a learner whose cell has a budget runs in the cell's
// console group, under the console's own ceiling: a command that asks
// for more memory than that is stopped by the kernel and the console says
// why, while a small one runs as before.
func TestConsoleGroupCeiling(t *testing.T) {
	tree, err := budget.Open()
	walltest.Require(t, walltest.Budget, err)
	g, err := tree.Make(fmt.Sprintf("console-test-%d", os.Getpid()), budget.Budget{Console: 64 << 20}.WithDefaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Delete(); err != nil {
			t.Error(err)
		}
	})
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// About 48 MiB of objects: kubectl holds several copies of them
	// while it prints them as YAML.
	big := strings.Repeat("x", 1<<20-4096)
	for i := range 48 {
		if _, err := f.cluster.Client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("big-%d", i)}, Data: map[string]string{"x": big},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := f.runner(t, Options{Cell: filepath.Join(clustertest.BinDir(t), "cell")})
	target := Target{Owner: "ada", Kubeconfig: f.kubeconfig, Cgroup: g.Procs(budget.LeafConsole)}
	run := func(line string) (*recorder, *Result, error) {
		rec := newRecorder()
		res, err := r.Run(ctx, Request{Target: target, Line: line, Output: rec.add})
		return rec, res, err
	}
	if rec, _, err := run("kubectl get namespaces -o name"); err != nil || !strings.Contains(rec.text(Stdout), "namespace/default") {
		t.Fatalf("a small command in the console group: %v\n%s%s", err, rec.text(Stdout), rec.text(Stderr))
	}
	rec, res, err := run("kubectl get configmaps -o yaml")
	if !errors.Is(err, ErrOutOfMemory) {
		t.Fatalf("kubectl printing 48 MiB of objects under a 64 MiB ceiling: got %v (result %+v); want ErrOutOfMemory", err, res)
	}
	if note := rec.text(Notice); !strings.Contains(note, "used all the memory your console's commands may use") || !strings.Contains(note, "-o name") {
		t.Errorf("the console's note: %q", note)
	}
	u, err := g.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.ConsoleOOMKills == 0 || u.OOMKills != 0 {
		t.Errorf("the group's kills: console %d, cluster %d; want the console's only", u.ConsoleOOMKills, u.OOMKills)
	}
	// Without the group, the same command runs (the ceiling, not the
	// command, stopped it).
	rec = newRecorder()
	if _, err := r.Run(ctx, Request{Target: Target{Owner: "ada", Kubeconfig: f.kubeconfig}, Line: "kubectl get configmaps -o yaml", Output: rec.add}); err != nil && !errors.Is(err, ErrOutputLimit) {
		t.Errorf("the same command outside the group: %v", err)
	}
}
