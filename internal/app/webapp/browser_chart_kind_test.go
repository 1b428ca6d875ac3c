package webapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"oplab.dev/oplab/charts/charttest"
	bt "oplab.dev/oplab/internal/browsertest"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/podexec"
)

// TestKindChartInChromium is the chart on a kind host serving a learner
// in Chromium: two server replicas on the chart's PostgreSQL, the
// learner's control plane a pod of the pods provider. The learner joins a
// class made from a replica's terminal, starts the failover lab and breaks
// it; then the replica serving them is deleted, as a node's drain or a
// rollout would. The page reconnects to the other replica, its log goes
// on (nothing cleared, nothing twice, in order), the failover's pass comes
// from there, Check passes, and the time to recovery lies between the
// fault and the check.
//
// A NodePort Service is the front, as a platform team's load balancer is:
// it selects the replicas the test marks as fronted, so that which replica
// served the learner is known; when that one goes the other is marked.
// Gated as the labs' self-tests on kind (clustertest.RequireSlowKind).
func TestKindChartInChromium(t *testing.T) {
	clustertest.RequireSlowKind(t)
	host := clustertest.NewKind(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Minute)
	defer cancel()
	const ns, nodePort, fronted = charttest.Namespace, 30080, "oplab.dev/test-front"
	nodes, err := host.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("the host's nodes: %v", err)
	}
	var nodeIP string
	for _, a := range nodes.Items[0].Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			nodeIP = a.Address
		}
	}
	front := fmt.Sprintf("%s:%d", nodeIP, nodePort)
	ready := charttest.Install(t, ctx, host, map[string]any{"host": front, "verbose": true})
	t.Logf("two replicas and PostgreSQL ready in %s; the front is http://%s", ready.Round(time.Second), front)

	replicas := func() []corev1.Pod {
		t.Helper()
		l, err := host.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: charttest.ServerSelector})
		if err != nil {
			t.Fatal(err)
		}
		var live []corev1.Pod
		for _, p := range l.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				live = append(live, p)
			}
		}
		return live
	}
	mark := func(pod string) {
		t.Helper()
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"yes"}}}`, fronted)
		if _, err := host.Client.CoreV1().Pods(ns).Patch(ctx, pod, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// What the servers said, when the test fails: the page shows only
	// what reached it.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		l, _ := host.Client.CoreV1().Pods(ns).List(context.WithoutCancel(ctx), metav1.ListOptions{LabelSelector: charttest.ServerSelector})
		for _, p := range l.Items {
			out, err := host.Client.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: ptr.To[int64](150)}).DoRaw(context.WithoutCancel(ctx))
			t.Logf("server %s (labels %v), its log's end (%v):\n%s", p.Name, p.Labels, err, out)
		}
		if eps, err := host.Client.DiscoveryV1().EndpointSlices(ns).List(context.WithoutCancel(ctx), metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=front"}); err == nil {
			for _, e := range eps.Items {
				for _, ep := range e.Endpoints {
					t.Logf("the front's endpoint %v: %+v", ep.Addresses, ep.Conditions)
				}
			}
		}
	})
	pods := replicas()
	if len(pods) != 2 {
		t.Fatalf("%d server pods running, want 2", len(pods))
	}
	first, second := pods[0].Name, pods[1].Name
	mark(first)
	selector := map[string]string{"app.kubernetes.io/name": "oplab", "app.kubernetes.io/component": "server",
		"app.kubernetes.io/instance": charttest.Release, fronted: "yes"}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "front", Namespace: ns},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: selector, Ports: []corev1.ServicePort{{
			Name: "http", Port: 8080, TargetPort: intstr.FromString("http"), NodePort: nodePort,
		}}},
	}
	if _, err := host.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The instructor and the class, from the first replica's terminal.
	oplab := func(stdin string, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		cmd := append([]string{"/usr/local/bin/oplab", "--provider=pods", "--data-dir=/tmp/cli"}, args...)
		if err := podexec.Stream(ctx, host.Config, ns, first, "server", cmd, strings.NewReader(stdin), &out, &errOut); err != nil {
			t.Fatalf("oplab %s in %s: %v: %s", strings.Join(args, " "), first, err, errOut.String())
		}
		return out.String()
	}
	oplab("ada-password\n", "instructor", "add", "ada")
	var class struct {
		JoinCode string `json:"joinCode"`
	}
	if out := oplab("", "class", "create", "morning", "--labs", "failover", "-o", "json"); json.Unmarshal([]byte(out), &class) != nil || class.JoinCode == "" {
		t.Fatalf("class create: %q", out)
	}

	var errs bt.Errors
	ctxB := bt.New(t, errs.Listen)
	sh := bt.NewShots(t, "chart-in-chromium")
	step := func(name string, limit time.Duration, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sh.Step(t, ctxB, limit, name, actions...)
	}
	url := "http://" + front
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("the page's errors:\n%s", strings.Join(errs.List(), "\n"))
		probe, err := chromedp.Run(ctxB, chromedp.Evaluate[string](`new Promise((done) => {
			const u = new URL('/api/events', location.href); u.protocol = 'ws:';
			const ws = new WebSocket(u);
			ws.onopen = () => { done('open'); ws.close(); };
			ws.onclose = (e) => done('closed ' + e.code + ' ' + e.reason);
			setTimeout(() => done('no answer in 5 s'), 5000);
		}).then(async (w) => w + '; GET page: ' + (await fetch(location.href)).status)`, chromedp.EvalAwaitPromise))
		t.Logf("from the page now: a WebSocket %s (%v)", probe, err)
	})
	step("Grace joins the class", time.Minute,
		chromedp.Navigate(url+"/join"),
		chromedp.SendKeys(`#code`, class.JoinCode),
		chromedp.SendKeys(`#name`, "Grace"),
		chromedp.Submit(`#join-form`),
		chromedp.WaitVisible(`#rejoin-code`))
	step("she starts the failover lab: a cell on the host", 5*time.Minute,
		chromedp.Navigate(url+"/labs/failover"),
		chromedp.WaitVisible(`#start:not([disabled])`),
		chromedp.Click(`#start`),
		chromedp.WaitVisible(`#exercise-panel`),
		chromedp.WaitReady(`#log > li.reconcile.idle`))
	broke := time.Now()
	step("she breaks it", time.Minute,
		chromedp.WaitVisible(`#break:not([disabled])`),
		chromedp.Click(`#break`),
		bt.TextContains("#clock", "Fault live for"))
	before := markLog(t, ctxB)

	// The replica serving her goes; the front sends her to the other.
	mark(second)
	gone := time.Now()
	if err := host.Client.CoreV1().Pods(ns).Delete(ctx, first, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	podGone := make(chan time.Duration, 1)
	go func() {
		_ = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			_, err := host.Client.CoreV1().Pods(ns).Get(ctx, first, metav1.GetOptions{})
			return err != nil, nil
		})
		podGone <- time.Since(gone)
	}()
	step("the page's log loses the replica", 2*time.Minute,
		chromedp.Poll[chromedp.Void](`document.querySelector('#log-status').textContent === 'Reconnecting…'`,
			chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(2*time.Minute)))
	lost := time.Since(gone)
	step("the page's log reconnects through the other replica", 3*time.Minute,
		chromedp.Poll[chromedp.Void](`document.querySelector('#log-status').textContent === ''`,
			chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(3*time.Minute)))
	t.Logf("after the replica's deletion: its stream dropped at %s, the page's log reconnected at %s, the pod was gone at %s",
		lost.Round(100*time.Millisecond), time.Since(gone).Round(100*time.Millisecond), (<-podGone).Round(100*time.Millisecond))
	step("its log goes on with the failover's pass", 3*time.Minute,
		chromedp.WaitReady(`#log > li.reconcile[data-kinds~="promoted"].after-t0`),
		sh.Take("resumed"))
	t.Logf("the failover's pass shown %s after the replica was deleted", time.Since(gone).Round(time.Second))
	logWentOn(t, ctxB, before)
	// Nothing twice, in the log's order: each line's cursor (its place in
	// the operator's log, the same on every server) comes after the one
	// before it.
	cursors := eval[[]string](t, ctxB, `[...document.querySelectorAll('#log > li:not(.skipped)')].map((li) => li.dataset.cursor || '')`)
	for i, c := range cursors {
		switch {
		case c == "":
			t.Errorf("line %d has no cursor", i)
		case i > 0 && c <= cursors[i-1]:
			t.Errorf("line %d (at %s) does not come after line %d (at %s): shown twice or out of the log's order", i, c, i-1, cursors[i-1])
		}
	}

	step("check passes through the other replica", 3*time.Minute, checkUntilPassed())
	checked := time.Now()
	shown := eval[string](t, ctxB, `document.querySelector('#clock').textContent`)
	_, d, ok := strings.Cut(shown, "Recovered in ")
	ttr, err := time.ParseDuration(strings.TrimSpace(d))
	if !ok || err != nil || ttr <= 0 || ttr > checked.Sub(broke) {
		t.Errorf("clock: %q, want a time to recovery of more than 0 and at most the %s from the fault to the check", shown, checked.Sub(broke).Round(time.Second))
	}
	t.Logf("time to recovery %s", ttr)

	// The console runs in her cell, as her: the chart's server has no
	// sandbox of its own and runs no kubectl on its machine.
	step("her console runs in her cell, as her", time.Minute,
		chromedp.Click(`#tab-console`),
		chromedp.SendKeys(`#console-in`, "kubectl auth whoami"+kb.Enter),
		chromedp.WaitVisible(`#console-in:not([disabled])`),
		bt.TextContains("#console-out", "system:serviceaccount:oplab-learner:learner"),
		chromedp.SendKeys(`#console-in`, "kubectl get pods -L databases.example.com/role"+kb.Enter),
		chromedp.WaitVisible(`#console-in:not([disabled])`),
		bt.TextContains("#console-out", "ROLE"),
		sh.Take("console"))
	if e := errs.List(); len(e) > 0 {
		t.Errorf("the page logged errors:\n%s", strings.Join(e, "\n"))
	}
}
