package engine

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/conflictwindow"
	"oplab.dev/oplab/internal/controllab"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/operator/install"
)

// TestLearnerControllerOnKind: on kind, where pods run real containers,
// the learner's module is built by a pod of the cluster and runs as the
// pod of the lab's Deployment, each seeing the kit or its program and
// nothing else of this machine: a broken line is reported on its line;
// the reference solution runs with its ServiceAccount's token, logs where
// the operator log is read, and passes every check of a learner's
// controller, conflictsRetried's refusals made by the conflictwindow
// webhook (kind's API server has no ConflictWindow plugin); a program that reads the host's files finds none; the
// controller stops when scaled to 0.
func TestLearnerControllerOnKind(t *testing.T) {
	c, e, l, ctx := writeReconcilerOnKind(t, 30*time.Minute)
	k, err := controllab.FindKit(clustertest.BinDir(t))
	if err != nil {
		t.Fatal(err)
	}

	// A broken line, reported on its line, as on embedded.
	files, err := controllab.LabModule(l.ID, lab.ModuleScaffold, nil, k)
	if err != nil {
		t.Fatal(err)
	}
	const file = "main.go"
	lines := strings.Split(string(files[file]), "\n")
	at := slices.IndexFunc(lines, func(s string) bool { return strings.HasPrefix(s, "func main() {") })
	if at < 0 {
		t.Fatalf("%s has no func main", file)
	}
	lines = slices.Insert(lines, at+1, "\tundefinedOnPurpose()")
	files[file] = []byte(strings.Join(lines, "\n"))
	start := time.Now()
	b, err := e.BuildAndRun(ctx, l, files, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the broken build took %s", time.Since(start).Round(100*time.Millisecond))
	if b.OK || !slices.ContainsFunc(b.Errors, func(ce controllab.CompileError) bool { return ce.File == file && ce.Line == at+2 }) {
		t.Fatalf("a broken line: got OK %v, errors %v, want an error on %s:%d\n%s", b.OK, b.Errors, file, at+2, b.Output)
	}

	// The solution, built and run; its pod sees its program only.
	start = time.Now()
	if err := e.runController(ctx, l.ID, &lab.RunController{Module: "solution"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("the solution built and started in %s", time.Since(start).Round(100*time.Millisecond))
	pl, err := controllab.LabPlace(l.ID)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := e.cs.CoreV1().Pods(pl.Namespace).List(ctx, metav1.ListOptions{LabelSelector: pl.Selector})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		running++
		checkConfinedPod(t, p)
	}
	if running != 1 {
		t.Errorf("got %d pods of the controller, want 1", running)
	}

	rep, err := e.RunChecks(ctx, nil, controllerChecks(t), CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		t.Logf("%-5v %s: %s (%s)", r.Passed, r.Kind, r.Reason, r.Elapsed.Duration().Round(100*time.Millisecond))
		if !r.Passed {
			t.Errorf("the solution failed %s: %s", r.Kind, r.Reason)
		}
	}

	// A program that looks for this machine's files finds none: not the
	// cluster's kubeconfig, not oplab's programs, not the node's. And one
	// that sends the conflictwindow webhook reviews of its own, which the
	// webhook answers and counts, does not move the count the grader
	// reads: the API server's.
	kc, err := c.Provider.KubeconfigPath(c.Name)
	if err != nil {
		t.Fatal(err)
	}
	refusedBefore, known, err := e.conflictsRefused(ctx)
	if err != nil || !known {
		t.Fatalf("the refused writes before the probe: %d, known %v, %v", refusedBefore, known, err)
	}
	webhookBefore := webhookOwnCount(t, ctx, e)
	const forged = 5
	probe := controllab.Files{"go.mod": files["go.mod"], "go.sum": files["go.sum"], "main.go": []byte(`package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

const review = ` + "`" + forgedReview + "`" + `

func main() {
	for _, p := range []string{` + strings.Join(quoted(kc, clustertest.BinDir(t)+"/oplab", k.Dir, "/etc/kubernetes/admin.conf", "/kind", "/var/lib/kubelet"), ", ") + `} {
		_, err := os.Stat(p)
		fmt.Printf("probe %s: %v\n", p, err)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for i := 0; i < ` + strconv.Itoa(forged) + `; i++ {
		until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
		resp, err := c.Post("https://conflictwindow.oplab-system.svc/validate", "application/json", strings.NewReader(strings.ReplaceAll(review, "UNTIL", until)))
		if err != nil {
			fmt.Printf("forged: %v\n", err)
			continue
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		fmt.Printf("forged: %d %v\n", resp.StatusCode, strings.Contains(string(b), ` + "`\"code\":409`" + `))
	}
	fmt.Println("Starting workers (the probe is done)")
	time.Sleep(time.Hour)
}
`)}
	b, err = e.BuildAndRun(ctx, l, probe, true)
	if err != nil {
		t.Fatal(err)
	}
	if !b.OK {
		t.Fatalf("the probe does not build:\n%s", b.Output)
	}
	var out []string
	done := func(s string) bool { return strings.Contains(s, "the probe is done") }
	for deadline := time.Now().Add(e.budget(2 * time.Minute)); time.Now().Before(deadline) && !slices.ContainsFunc(out, done); {
		time.Sleep(time.Second)
		out, _ = e.logSource().Lines(ctx, time.Time{})
	}
	probes, answered := 0, 0
	for _, line := range out {
		if strings.Contains(line, "forged: 200 true") {
			answered++
		}
		if !strings.Contains(line, "probe /") {
			continue
		}
		probes++
		if !strings.Contains(line, "no such file or directory") {
			t.Errorf("the controller's pod found a file of this machine: %s", line)
		}
	}
	if probes != 6 {
		t.Errorf("got %d probes in the controller's log, want 6:\n%s", probes, strings.Join(out, "\n"))
	}
	// The forgeries reached the webhook and were refused by it: the hole
	// the grader must not read through is there to be tried.
	if webhookAfter := webhookOwnCount(t, ctx, e); answered != forged || webhookAfter != webhookBefore+forged {
		t.Errorf("forged reviews: %d answered with 409, the webhook counted %d→%d; want %d of each\n%s",
			answered, webhookBefore, webhookAfter, forged, strings.Join(out, "\n"))
	}
	if refusedAfter, _, err := e.conflictsRefused(ctx); err != nil || refusedAfter != refusedBefore {
		t.Errorf("the grader's count of refused writes moved with forged reviews: %d→%d (%v)", refusedBefore, refusedAfter, err)
	}

	if err := e.stopOperator(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.uninstallController(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
}

// forgedReview is an AdmissionReview the webhook refuses: a write by the
// user its old object marks, within the mark's time (UNTIL).
const forgedReview = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"forged","kind":{"group":"","version":"v1","kind":"ConfigMap"},"resource":{"group":"","version":"v1","resource":"configmaps"},"name":"x","namespace":"default","operation":"UPDATE","userInfo":{"username":"system:serviceaccount:default:forger"},"object":{"metadata":{"name":"x"}},"oldObject":{"metadata":{"name":"x","annotations":{"` + conflictwindow.UserKey + `":"system:serviceaccount:default:forger","` + conflictwindow.UntilKey + `":"UNTIL"}}}}}`

// webhookOwnCount is what the conflictwindow webhook counts itself, read
// through the API server's service proxy.
func webhookOwnCount(t *testing.T, ctx context.Context, e *Engine) int64 {
	t.Helper()
	rc, err := e.cs.CoreV1().Services(install.Namespace).ProxyGet("https", conflictService, "443", conflictwindow.MetricsPath, nil).Stream(ctx)
	if err != nil {
		t.Fatalf("read the webhook's metrics: %v", err)
	}
	r, err := readRefusals(rc)
	if err != nil || !r.pluginKnown {
		t.Fatalf("the webhook's own count: %+v, %v", r, err)
	}
	return r.plugin
}

// checkConfinedPod checks that p, a pod of a learner's program, sees its
// program and nothing else of this machine, as an unprivileged user.
func checkConfinedPod(t *testing.T, p corev1.Pod) {
	t.Helper()
	sc := p.Spec.SecurityContext
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser == 0 || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("pod %s: security context %+v, want a user not root", p.Name, sc)
	}
	hostPaths := 0
	for _, v := range p.Spec.Volumes {
		if v.HostPath != nil {
			hostPaths++
			if !strings.Contains(v.HostPath.Path, "/workspace/run/controller-") {
				t.Errorf("pod %s: hostPath %s, want its program only", p.Name, v.HostPath.Path)
			}
		}
	}
	if hostPaths != 1 {
		t.Errorf("pod %s: %d hostPath volumes, want 1 (its program)", p.Name, hostPaths)
	}
	for _, ctr := range p.Spec.Containers {
		for _, m := range ctr.VolumeMounts {
			if m.MountPath != "/tmp" && !m.ReadOnly && !strings.HasPrefix(m.MountPath, "/var/run/secrets/kubernetes.io/") {
				t.Errorf("pod %s: %s mounted writable", p.Name, m.MountPath)
			}
		}
		if s := ctr.SecurityContext; s == nil || s.ReadOnlyRootFilesystem == nil || !*s.ReadOnlyRootFilesystem || s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation {
			t.Errorf("pod %s: container security context %+v, want a read-only root and no privilege to gain", p.Name, s)
		}
	}
}

func quoted(ss ...string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// writeReconcilerOnKind makes a kind cluster with the write-reconciler
// lab's controller Deployment installed, and an engine on it; ctx ends
// within d.
func writeReconcilerOnKind(t testing.TB, d time.Duration) (*clustertest.Cluster, *Engine, *lab.Lab, context.Context) {
	t.Helper()
	c := clustertest.NewKind(t)
	e, err := New(Target{Config: c.Config, Provider: c.Provider, Cluster: c.Name, BinDir: clustertest.BinDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t, d)
	l := shipped(t, "write-reconciler")
	if missing := lacks(e, l); len(missing) > 0 {
		t.Fatalf("kind lacks %v for lab %s", missing, l.ID)
	}
	e.use(l)
	if err := e.installController(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	return c, e, l, ctx
}
