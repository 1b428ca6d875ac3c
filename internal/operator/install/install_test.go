package install

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/oplog"
)

// buildBinaries builds hostpod and the stand-in operator
// (testdata/standin) into a temporary directory.
func buildBinaries(t *testing.T) (hostpod, operator string) {
	t.Helper()
	dir := t.TempDir()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build the test's programs: %v", err)
	}
	for name, pkg := range map[string]string{"hostpod": "oplab.dev/oplab/cmd/hostpod", "standin": "./testdata/standin"} {
		out, err := exec.Command(goBin, "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	return filepath.Join(dir, "hostpod"), filepath.Join(dir, "standin")
}

// TestInstallHostProcess installs the chart into a real embedded cluster with
// the operator as a host process, then upgrades and uninstalls it.
func TestInstallHostProcess(t *testing.T) {
	c := clustertest.New(t)
	hostpod, operator := buildBinaries(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	host := &Host{
		Runner: c.Provider, Cluster: c.Name, Operator: operator, HostPod: hostpod, AdminKubeconfig: c.Kubeconfig,
		// In the cluster's directory: a contained cluster sees no other.
		Dir: filepath.Join(filepath.Dir(c.Kubeconfig), "pg-operator"), TokenTTL: time.Hour,
	}

	in := New(c.Config, Options{Host: host, Values: map[string]any{"instanceMode": "simulated"}})
	res, err := in.Install(ctx)
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	if res.Revision != 1 || res.Upgraded || res.Host == nil {
		t.Fatalf("install result = %+v, want revision 1, not upgraded, with a host process", res)
	}
	if until := time.Until(res.Host.TokenExpires); until < 50*time.Minute || until > 61*time.Minute {
		t.Errorf("token expires in %s, want about the hour asked", until)
	}

	t.Run("objects", func(t *testing.T) {
		dep, err := c.Client.AppsV1().Deployments(Namespace).Get(ctx, Deployment, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if dep.Status.AvailableReplicas != 1 {
			t.Errorf("deployment available replicas = %d, want 1", dep.Status.AvailableReplicas)
		}
		if got := dep.Spec.Template.Spec.Containers[0].Args; !slices.Contains(got, "--instance-mode=simulated") {
			t.Errorf("deployment args %v, want --instance-mode=simulated", got)
		}
		if _, err := c.Client.CoreV1().ServiceAccounts(Namespace).Get(ctx, ServiceAccount, metav1.GetOptions{}); err != nil {
			t.Errorf("service account: %v", err)
		}
		if _, err := c.Client.RbacV1().ClusterRoleBindings().Get(ctx, "pg-operator", metav1.GetOptions{}); err != nil {
			t.Errorf("cluster role binding: %v", err)
		}
		if _, err := c.Client.CoreV1().Services(Namespace).Get(ctx, "pg-operator-metrics", metav1.GetOptions{}); err != nil {
			t.Errorf("metrics service: %v", err)
		}
	})

	// The lone host process elects no leader (no Lease renewed every 2 s
	// while the session idles); the chart still grants the leader election
	// Role, as in a real cluster.
	t.Run("no leader election", func(t *testing.T) {
		_, err := c.Client.CoordinationV1().Leases(Namespace).Get(ctx, "pg-operator.databases.example.com", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("get the operator's leader election lease: got %v, want not found", err)
		}
		if _, err := c.Client.RbacV1().Roles(Namespace).Get(ctx, "pg-operator-leader-election", metav1.GetOptions{}); err != nil {
			t.Errorf("leader election role: got %v, want it installed", err)
		}
	})

	t.Run("rbac applies to the operator", func(t *testing.T) {
		kc, err := os.ReadFile(res.Host.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Stat(res.Host.Kubeconfig); fi.Mode().Perm() != 0o600 {
			t.Errorf("operator kubeconfig mode = %v, want 0600", fi.Mode().Perm())
		}
		for _, secret := range []string{"client-certificate-data", "client-key-data", "token:"} {
			if strings.Contains(string(kc), secret) {
				t.Errorf("operator kubeconfig holds %s, want only a token file", secret)
			}
		}
		cs := operatorClient(t, res.Host.Kubeconfig)
		review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := review.Status.UserInfo.Username, "system:serviceaccount:oplab-system:pg-operator"; got != want {
			t.Errorf("operator authenticates as %q, want %q", got, want)
		}
		tests := []struct {
			name      string
			do        func() error
			forbidden bool
		}{
			{"list statefulsets (granted)", func() error {
				_, err := cs.AppsV1().StatefulSets("default").List(ctx, metav1.ListOptions{})
				return err
			}, false},
			{"list nodes (not granted)", func() error {
				_, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
				return err
			}, true},
			{"delete a namespace (not granted)", func() error {
				return cs.CoreV1().Namespaces().Delete(ctx, "default", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
			}, true},
			{"read cluster roles (not granted)", func() error {
				_, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
				return err
			}, true},
		}
		for _, tt := range tests {
			err := tt.do()
			if tt.forbidden != apierrors.IsForbidden(err) || !tt.forbidden && err != nil {
				t.Errorf("%s: error %v, want forbidden=%v", tt.name, err, tt.forbidden)
			}
		}
		// The operator itself could list statefulsets and not nodes.
		waitLog(ctx, t, res.Host.LogPath, "listed 0 statefulsets")
		waitLog(ctx, t, res.Host.LogPath, `nodes is forbidden: User "system:serviceaccount:oplab-system:pg-operator"`)
	})

	t.Run("kubectl logs", func(t *testing.T) {
		waitLog(ctx, t, res.Host.LogPath, "reconcile tick 1")
		out := kubectl(ctx, t, c.Kubeconfig, "logs", "-n", Namespace, "deploy/pg-operator")
		if strings.Contains(out, " stdout F ") || strings.Contains(out, " stderr F ") {
			t.Errorf("kubectl logs = %q, want the text without the CRI prefixes", abbrev(out))
		}
		for _, want := range []string{"standin operator starting", "pod=oplab-system/pg-operator-", "reconcile tick 1"} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl logs deploy/pg-operator = %q, want it to contain %q", abbrev(out), want)
			}
		}
	})

	t.Run("follows its pod", func(t *testing.T) {
		scale := func(n int32) {
			t.Helper()
			// As kubectl scale does, without a resourceVersion to conflict on.
			patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
			if _, err := c.Client.AppsV1().Deployments(Namespace).Patch(ctx, Deployment, types.MergePatchType, patch, metav1.PatchOptions{}, "scale"); err != nil {
				t.Fatal(err)
			}
		}
		waitProbe := func(want bool) {
			t.Helper()
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
				return probe(res.Host.HealthAddr) == want, nil
			})
			if err != nil {
				t.Fatalf("operator answering = %v never came, log:\n%s", want, tail(20, res.Host.LogPath, filepath.Join(host.Dir, "hostpod.log")))
			}
		}
		// kubectl scale --replicas=0 stops the operator, as it would stop
		// the pod's container.
		scale(0)
		waitProbe(false)
		scale(1)
		waitProbe(true)
		// replace deletes the operator's pod with grace (nil: the pod's
		// own) and waits for the process of the pod replacing it.
		replace := func(grace *int64) (old string) {
			t.Helper()
			pods, err := c.Client.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=pg-operator"})
			if err != nil || len(pods.Items) != 1 {
				t.Fatalf("operator pods: %v, %d, want 1", err, len(pods.Items))
			}
			old = pods.Items[0].Name
			if err := c.Client.CoreV1().Pods(Namespace).Delete(ctx, old, metav1.DeleteOptions{GracePeriodSeconds: grace}); err != nil {
				t.Fatal(err)
			}
			err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
				b, _ := os.ReadFile(res.Host.LogPath)
				return strings.Contains(string(b), "pod=oplab-system/pg-operator-") && !strings.Contains(string(b), old) && probe(res.Host.HealthAddr), nil
			})
			if err != nil {
				t.Fatalf("operator not restarted for the pod replacing %s; log:\n%s", old, tail(20, res.Host.LogPath, filepath.Join(host.Dir, "hostpod.log")))
			}
			return old
		}
		// A deleted pod is replaced, and the process with it.
		replace(nil)
		// A pod deleted with no grace period (kubectl delete --force
		// --grace-period=0) has its process killed, as a crash would
		// end it: its log, now the previous one, ends with the kill.
		now := int64(0)
		old := replace(&now)
		if b, err := os.ReadFile(res.Host.PreviousLogPath); err != nil || !strings.Contains(string(b), old) || !strings.Contains(string(b), "exited: signal: killed") {
			t.Errorf("the log of the run for pod %s, deleted at once: %v, want it to end with the kill:\n%s", old, err, tail(5, res.Host.PreviousLogPath))
		}
	})

	t.Run("upgrade", func(t *testing.T) {
		// The upgrade's run serves profiles, as where the cluster does
		// (Host.Profiling); the first run served none.
		profiled := *host
		profiled.Profiling = true
		up := New(c.Config, Options{Host: &profiled, Values: map[string]any{"instanceMode": "simulated", "leaderElect": false}})
		res2, err := up.Install(ctx)
		if err != nil {
			t.Fatalf("upgrade: %v", err)
		}
		if res2.Revision != 2 || !res2.Upgraded {
			t.Fatalf("upgrade result = %+v, want revision 2, upgraded", res2)
		}
		dep, err := c.Client.AppsV1().Deployments(Namespace).Get(ctx, Deployment, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := dep.Spec.Template.Spec.Containers[0].Args; !slices.Contains(got, "--leader-elect=false") {
			t.Errorf("deployment args after upgrade %v, want --leader-elect=false", got)
		}
		if _, err := c.Client.RbacV1().Roles(Namespace).Get(ctx, "pg-operator-leader-election", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("leader-election role after upgrade without leader election: error %v, want NotFound", err)
		}
		// The process was restarted; the old run's log was kept as the
		// previous one. The host process never elects a leader, whatever the
		// chart says, so the runs are told apart by their metrics address,
		// a free port picked at each start. The previous log is the first
		// install's, or, when its host process followed the rolled-out pod
		// just before it was stopped, the few lines of that last short run:
		// in neither is the new address, and the new log has none of the
		// old runs' lines.
		waitLog(ctx, t, res2.Host.LogPath, "--metrics-bind-address="+res2.Host.MetricsAddr)
		if b, err := os.ReadFile(res2.Host.PreviousLogPath); err != nil || len(b) == 0 || strings.Contains(string(b), "--metrics-bind-address="+res2.Host.MetricsAddr) {
			t.Errorf("previous log: %v, %q, want a first install's run (metrics on %s), not the upgrade's (%s)", err, abbrev(string(b)), res.Host.MetricsAddr, res2.Host.MetricsAddr)
		}
		if b, _ := os.ReadFile(res2.Host.LogPath); strings.Contains(string(b), "--metrics-bind-address="+res.Host.MetricsAddr) {
			t.Errorf("the upgrade's log %s holds the first install's run (metrics on %s): it was not rotated", res2.Host.LogPath, res.Host.MetricsAddr)
		}
		if probe(res.Host.HealthAddr) {
			t.Errorf("the first run still answers on %s after the upgrade", res.Host.HealthAddr)
		}
		for _, run := range []struct {
			log  string
			want bool
		}{{res2.Host.PreviousLogPath, false}, {res2.Host.LogPath, true}} {
			b, err := os.ReadFile(run.log)
			if got := strings.Contains(string(b), "--pprof-bind-address=127.0.0.1:"); err != nil || got != run.want {
				t.Errorf("%s names a pprof address: got %v (%v), want %v", run.log, got, err, run.want)
			}
		}
		res = res2
	})

	t.Run("refresh token", func(t *testing.T) {
		tokenPath := filepath.Join(host.Dir, "token")
		old, err := os.ReadFile(tokenPath)
		if err != nil {
			t.Fatal(err)
		}
		expires, err := in.RefreshToken(ctx)
		if err != nil {
			t.Fatalf("refresh token: %v", err)
		}
		if expires.Before(res.Host.TokenExpires) || time.Until(expires) < 50*time.Minute {
			t.Errorf("refreshed token expires %s, want about an hour from now, not before the last one's %s", expires, res.Host.TokenExpires)
		}
		renewed, err := os.ReadFile(tokenPath)
		if err != nil {
			t.Fatal(err)
		}
		if string(renewed) == string(old) || len(renewed) == 0 {
			t.Error("token file unchanged after refresh")
		}
		// hostpod, which keeps the token fresh, had nothing to complain of.
		if b, _ := os.ReadFile(filepath.Join(host.Dir, "hostpod.log")); strings.Contains(string(b), "refresh token") {
			t.Errorf("hostpod log reports token trouble:\n%s", b)
		}
		// The same kubeconfig works with the new token.
		if _, err := operatorClient(t, res.Host.Kubeconfig).AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("list statefulsets with the refreshed token: %v", err)
		}
	})

	t.Run("uninstall", func(t *testing.T) {
		if err := in.Uninstall(ctx); err != nil {
			t.Fatalf("uninstall: %v", err)
		}
		if probe(res.Host.HealthAddr) {
			t.Errorf("the operator still answers on %s after uninstall", res.Host.HealthAddr)
		}
		if _, err := c.Client.CoreV1().Namespaces().Get(ctx, Namespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace after uninstall: error %v, want NotFound", err)
		}
		if _, err := c.Client.RbacV1().ClusterRoles().Get(ctx, "pg-operator", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("cluster role after uninstall: error %v, want NotFound", err)
		}
		if _, err := os.Stat(filepath.Join(host.Dir, "token")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("token file after uninstall: %v, want it removed", err)
		}
		if err := (PodLog{Config: c.Config}).Lines(ctx, false, func(oplog.Line) error { return nil }); !errors.Is(err, ErrNotInstalled) {
			t.Errorf("the operator's log after uninstall: %v, want ErrNotInstalled", err)
		}
		// Uninstalling twice is fine.
		if err := in.Uninstall(ctx); err != nil {
			t.Errorf("second uninstall: %v", err)
		}
	})
}

func operatorClient(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

func kubectl(ctx context.Context, t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	bin := filepath.Join(clustertest.BinDir(t), "kubectl")
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kubeconfig, "--request-timeout=20s"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// waitLog waits until the CRI log at path has a line containing want.
func waitLog(ctx context.Context, t *testing.T, path, want string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), want), nil
	})
	if err != nil {
		b, _ := os.ReadFile(path)
		t.Fatalf("log %s never had %q; it holds:\n%s", path, want, abbrev(string(b)))
	}
}

func probe(addr string) bool {
	c := &http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func abbrev(s string) string {
	if len(s) > 2000 {
		return s[:1000] + "\n...\n" + s[len(s)-1000:]
	}
	return s
}
