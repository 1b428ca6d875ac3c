package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/console"
	"oplab.dev/oplab/internal/netpolicy"
	"oplab.dev/oplab/internal/operator/install"
)

// TestKindPodsProvider runs three learners' control planes as pods on a
// kind host cluster, as a university's cluster would: each answers
// through its port forward with objects of its own; deleting one's pod
// brings it back from its claim with the learner's objects; the cells'
// NetworkPolicy lets only oplab's server pods in and nothing out; Delete
// leaves no pod, claim or Service behind.
func TestKindPodsProvider(t *testing.T) {
	p, host, _ := clustertest.NewPodsProvider(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()
	const ns = clustertest.PodsNamespace
	start := time.Now()

	names := []string{"ada", "grace", "linus"}
	clients := make([]kubernetes.Interface, len(names))
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, name := range names {
		wg.Go(func() {
			began := time.Now()
			if errs[i] = p.Create(ctx, name); errs[i] != nil {
				return
			}
			t.Logf("%s's control plane ready in %s", name, time.Since(began).Round(time.Millisecond))
			cfg, err := p.RESTConfig(name)
			if err != nil {
				errs[i] = err
				return
			}
			clients[i], errs[i] = kubernetes.NewForConfig(cfg)
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, n := range names {
			if err := p.Delete(context.WithoutCancel(ctx), n); err != nil && !errors.Is(err, cluster.ErrNotFound) {
				t.Errorf("delete %s: %v", n, err)
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	t.Logf("three control planes ready in %s", time.Since(start).Round(time.Millisecond))

	// Each learner's operator runs in their cell and reconciles there.
	for i, name := range names {
		wg.Go(func() {
			in, err := install.ForCluster(p, name, clustertest.BinDir(t), install.Options{})
			if err != nil {
				errs[i] = err
				return
			}
			began := time.Now()
			if _, errs[i] = in.Install(ctx); errs[i] == nil {
				t.Logf("%s's operator running in its cell in %s", name, time.Since(began).Round(time.Millisecond))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}

	// Each cluster is its own: a learner's object is not in another's.
	for i, name := range names {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}, Data: map[string]string{"learner": name}}
		if _, err := clients[i].CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for i, name := range names {
		got, err := clients[i].CoreV1().ConfigMaps("default").Get(ctx, "owner", metav1.GetOptions{})
		if err != nil || got.Data["learner"] != name {
			t.Errorf("%s reads owner=%q (%v), want its own", name, got.Data["learner"], err)
		}
	}
	list, err := p.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("List: %d clusters, want 3: %+v", len(list), list)
	}
	for _, s := range list {
		if s.State != cluster.StateRunning || s.Provider != "pods" {
			t.Errorf("List: %s is %s on %s, want running on pods", s.Name, s.State, s.Provider)
		}
	}

	// The cell holds nothing of the host: no ServiceAccount token was
	// mounted into the admitted pod, nothing runs privileged.
	cells, err := host.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=oplab-cell"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells.Items) != 3 {
		t.Fatalf("cell pods: %d, want 3", len(cells.Items))
	}
	for _, pod := range cells.Items {
		for _, v := range pod.Spec.Volumes {
			if v.Projected != nil || v.HostPath != nil {
				t.Errorf("cell %s mounts %s (%+v): a learner could read it through KWOK's pod logs", pod.Name, v.Name, v.VolumeSource)
			}
		}
		for _, c := range pod.Spec.Containers {
			if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Errorf("cell %s container %s: security context %+v", pod.Name, c.Name, sc)
			}
		}
	}

	// The network wall, as the policies say it. kind's bridge CNI built
	// here enforces no NetworkPolicy, so the rule is checked by evaluating
	// the policies the host cluster holds, by the API's rules (package
	// netpolicy), against the real pods and namespaces: only a pod with the
	// server's labels in the server's namespace (here the cells', as the
	// provider was told no other) reaches a cell's API port, and a cell
	// reaches nothing.
	policies, err := host.Client.NetworkingV1().NetworkPolicies(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nsList, err := host.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	network := netpolicy.Network{Namespaces: map[string]map[string]string{}, Policies: policies.Items}
	for _, n := range nsList.Items {
		network.Namespaces[n.Name] = n.Labels
	}
	server := netpolicy.Endpoint{Namespace: ns, Labels: cluster.PodsServerLabels(), IP: "10.244.0.250"}
	elsewhere := netpolicy.Endpoint{Namespace: "default", Labels: cluster.PodsServerLabels(), IP: "10.244.0.251"}
	stranger := netpolicy.Endpoint{Namespace: ns, Labels: map[string]string{"app": "anything"}, IP: "10.244.0.252"}
	allows := func(what string, from, to netpolicy.Endpoint, port netpolicy.Port, want bool) {
		t.Helper()
		if got, err := network.Allows(from, to, port); err != nil || got != want {
			t.Errorf("%s: got allowed %v (%v), want %v", what, got, err, want)
		}
	}
	for _, pod := range cells.Items {
		to := netpolicy.Pod(pod)
		allows("the server to "+pod.Name+"'s API port", server, to, netpolicy.TCP(6443), true)
		allows("the server to another port of "+pod.Name, server, to, netpolicy.TCP(2379), false)
		allows("a pod with the server's labels in another namespace to "+pod.Name, elsewhere, to, netpolicy.TCP(6443), false)
		allows("an unlabelled pod to "+pod.Name, stranger, to, netpolicy.TCP(6443), false)
		allows(pod.Name+" to the server", to, server, netpolicy.TCP(8080), false)
		allows(pod.Name+" to the host's API server", to, netpolicy.Outside("10.96.0.1"), netpolicy.TCP(443), false)
		for _, other := range cells.Items {
			if other.Name != pod.Name {
				allows("cell "+other.Name+" to cell "+pod.Name, netpolicy.Pod(other), to, netpolicy.TCP(6443), false)
			}
		}
	}

	// The web console's commands run in the learner's own cell, by exec in
	// its console container: kubectl there reaches their API server and
	// nothing of the host (no token, the cell's network wall), takes the
	// YAML editor's input, says how it exited, and a follow the learner
	// stops leaves no kubectl behind in the cell.
	t.Run("console in the cell", func(t *testing.T) {
		testConsoleInCell(t, ctx, p, host.Name, "grace", clients[1])
	})

	// Deleting a learner's control-plane pod: it comes back from its claim
	// with the learner's objects, and the same kubeconfig reaches it.
	var ada *corev1.Pod
	for i := range cells.Items {
		if cells.Items[i].Labels["oplab.dev/cluster"] == "ada" {
			ada = &cells.Items[i]
		}
	}
	if ada == nil {
		t.Fatal("no pod for ada")
	}
	before := ada.UID
	deleted := time.Now()
	if err := host.Client.CoreV1().Pods(ns).Delete(ctx, ada.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 5*time.Minute, false, func(ctx context.Context) (bool, error) {
		pod, err := host.Client.CoreV1().Pods(ns).Get(ctx, ada.Name, metav1.GetOptions{})
		if err != nil || pod.UID == before {
			return false, nil
		}
		if _, err = clients[0].CoreV1().ConfigMaps("default").Get(ctx, "owner", metav1.GetOptions{}); err != nil {
			return false, nil
		}
		// Answering through the tunnel comes a moment before the
		// kubelet's readiness probe says so.
		st, err := p.Status(ctx, "ada")
		return err == nil && st.State == cluster.StateRunning, nil
	}); err != nil {
		st, _ := p.Status(ctx, "ada")
		// How the control plane's container last ended (OOMKilled, an
		// exit code) and what it said before, for the reason.
		if pod, gerr := host.Client.CoreV1().Pods(ns).Get(context.WithoutCancel(ctx), ada.Name, metav1.GetOptions{}); gerr == nil {
			for _, cs := range pod.Status.ContainerStatuses {
				if term := cs.LastTerminationState.Terminated; term != nil {
					t.Logf("ada's %s container last ended: %s, exit code %d, after %d restarts", cs.Name, term.Reason, term.ExitCode, cs.RestartCount)
				}
			}
		}
		for _, previous := range []bool{true, false} {
			raw, lerr := host.Client.CoreV1().Pods(ns).GetLogs(ada.Name, &corev1.PodLogOptions{
				Container: "controlplane", Previous: previous, TailLines: ptr.To[int64](60),
			}).DoRaw(context.WithoutCancel(ctx))
			t.Logf("ada's controlplane container's log (previous %v, %v):\n%s", previous, lerr, raw)
		}
		t.Fatalf("ada's cluster did not come back: %v; status %+v", err, st)
	}
	t.Logf("ada's control plane back from its claim %s after the pod's deletion", time.Since(deleted).Round(time.Millisecond))
	got, err := clients[0].CoreV1().ConfigMaps("default").Get(ctx, "owner", metav1.GetOptions{})
	if err != nil || got.Data["learner"] != "ada" {
		t.Fatalf("after the pod came back: owner=%v (%v)", got.Data, err)
	}
	if _, err := clients[0].CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("create after the pod came back: %v", err)
	}

	// Delete leaves nothing of a cell.
	for _, n := range names {
		if err := p.Delete(ctx, n); err != nil {
			t.Fatalf("delete %s: %v", n, err)
		}
	}
	for what, count := range map[string]func() (int, error){
		"pods": func() (int, error) {
			l, err := host.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		"claims": func() (int, error) {
			l, err := host.Client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		"services": func() (int, error) {
			l, err := host.Client.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		"secrets": func() (int, error) {
			l, err := host.Client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=oplab-cell"})
			return len(l.Items), err
		},
	} {
		if n, err := count(); err != nil || n != 0 {
			t.Errorf("after Delete: %d %s left (%v)", n, what, err)
		}
	}
	if _, err := p.Status(ctx, "ada"); !errors.Is(err, cluster.ErrNotFound) {
		t.Errorf("status after delete: got %v, want ErrNotFound", err)
	}
	if err := p.Delete(ctx, "ada"); !errors.Is(err, cluster.ErrNotFound) && !apierrors.IsNotFound(err) {
		t.Errorf("second delete: got %v, want ErrNotFound", err)
	}
}

func testConsoleInCell(t *testing.T, ctx context.Context, p *cluster.Provider, host, name string, admin kubernetes.Interface) {
	r, err := console.New(ctx, console.Options{RemoteOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	remote := p.ConsoleIn(name)
	if remote == nil {
		t.Fatal("the pods provider runs no console in its cells")
	}
	path, err := p.KubeconfigPath(name)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, line, stdin string) (string, *console.Result, error) {
		var out strings.Builder
		res, err := r.Run(ctx, console.Request{Target: console.Target{Owner: name, Kubeconfig: kubeconfig, Remote: remote}, Line: line, Stdin: []byte(stdin), Output: func(c console.Chunk) { out.Write(c.Data) }})
		return out.String(), res, err
	}
	// The command runs with the kubeconfig it is given, as oplab's server
	// reaches the cluster (here through a port forward), pointed at the
	// cell's loopback; never with the cell's own admin credentials.
	if _, err := admin.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "learner"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok, err := admin.CoreV1().ServiceAccounts("default").CreateToken(ctx, "learner", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range cfg.AuthInfos {
		*u = clientcmdapi.AuthInfo{Token: tok.Status.Token}
	}
	learner, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	var who strings.Builder
	if _, err := r.Run(ctx, console.Request{Target: console.Target{Owner: name, Kubeconfig: learner, Remote: remote}, Line: "kubectl auth whoami -o jsonpath={.status.userInfo.username}", Output: func(c console.Chunk) { who.Write(c.Data) }}); err != nil || who.String() != "system:serviceaccount:default:learner" {
		t.Fatalf("whoami with the learner's kubeconfig in the cell: %q, %v", who.String(), err)
	}
	who.Reset()
	var exit *console.ExitError
	if _, err := r.Run(ctx, console.Request{Target: console.Target{Owner: name, Kubeconfig: learner, Remote: remote}, Line: "kubectl get configmap owner", Output: func(c console.Chunk) { who.Write(c.Data) }}); !errors.As(err, &exit) || !strings.Contains(who.String(), "Forbidden") {
		t.Fatalf("a read the learner's account may not do, in the cell: %q, %v", who.String(), err)
	}

	if out, _, err := run(ctx, "kubectl get configmap owner -o jsonpath={.data.learner}", ""); err != nil || out != name {
		t.Fatalf("get owner in %s's cell: %q, %v", name, out, err)
	}
	yaml := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-console\n"
	if out, _, err := run(ctx, "kubectl apply -f -", yaml); err != nil || !strings.Contains(out, "configmap/from-console created") {
		t.Fatalf("apply -f - in the cell: %q, %v", out, err)
	}
	if out, res, err := run(ctx, "kubectl get configmap nosuch", ""); !errors.As(err, &exit) || res.ExitCode != 1 || !strings.Contains(out, "NotFound") {
		t.Fatalf("a failing command in the cell: %q, %+v, %v", out, res, err)
	}

	marker := fmt.Sprintf("console-follow-%d", time.Now().UnixNano())
	inCell := func() bool {
		// The host's node sees the cell's processes: a kubectl whose
		// command line holds the marker (not this grep, whose does too).
		out, _ := exec.CommandContext(ctx, "docker", "exec", "oplab-"+host+"-control-plane", "sh", "-c",
			`for f in $(grep -l -- `+marker+` /proc/[0-9]*/cmdline 2>/dev/null); do d=${f%/cmdline}; [ "$(cat $d/comm 2>/dev/null)" = kubectl ] && echo $d; done; true`).Output()
		return strings.TrimSpace(string(out)) != ""
	}
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, _, err := run(fctx, "kubectl get configmaps -w -l "+marker, "")
		done <- err
	}()
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return inCell(), nil
	}); err != nil {
		stop()
		t.Fatalf("the follow's kubectl never ran in the cell: %v", err)
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a stopped follow: %v", err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return !inCell(), nil
	}); err != nil {
		t.Errorf("the follow's kubectl still runs in the cell a minute after the learner stopped it")
	}
}
