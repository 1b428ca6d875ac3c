package charts_test

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"oplab.dev/oplab/charts/charttest"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestKindChart installs oplab's chart on a kind host as a platform team
// would (the images loaded, no registry): two server replicas and
// PostgreSQL come up, one replica holds the Lease, the failover lab's
// self-test passes from inside the cluster with the server's
// ServiceAccount (the pods provider reaching the cell by its Service, the
// store in the chart's PostgreSQL), and when the leading replica's pod is
// deleted the other leads. Gated as the labs' self-tests on kind
// (clustertest.RequireSlowKind).
func TestKindChart(t *testing.T) {
	clustertest.RequireSlowKind(t)
	host := clustertest.NewKind(t)
	ctx, cancel := context.WithTimeout(t.Context(), 25*time.Minute)
	defer cancel()
	const ns = charttest.Namespace
	ready := charttest.Install(t, ctx, host, nil)
	t.Logf("two replicas and PostgreSQL ready in %s", ready.Round(time.Second))
	leader := poll(t, ctx, "a replica holding the Lease", time.Minute, func() (string, bool) {
		return holder(ctx, host), holder(ctx, host) != ""
	})

	// The learner's side, from inside the cluster: the failover lab's
	// self-test with the server's identity and store.
	cli := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "selftest", Namespace: ns, Labels: cluster.PodsServerLabels()},
		Spec: corev1.PodSpec{
			ServiceAccountName: "lab-oplab",
			RestartPolicy:      corev1.RestartPolicyNever,
			SecurityContext:    &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532)},
			Containers: []corev1.Container{{
				Name: "oplab", Image: cluster.DefaultPodsImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Args: []string{"--provider=pods", "--data-dir=/tmp/oplab", "lab", "selftest", "failover"},
				Env: []corev1.EnvVar{
					{Name: "OPLAB_STORE_URL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "lab-oplab-store"}, Key: "url"}}},
					{Name: "OPLAB_PODS_NAMESPACE", Value: "oplab-cells"},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
			}},
			Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
	if _, err := host.Client.CoreV1().Pods(ns).Create(ctx, cli, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var phase corev1.PodPhase
	_ = wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, false, func(ctx context.Context) (bool, error) {
		p, err := host.Client.CoreV1().Pods(ns).Get(ctx, "selftest", metav1.GetOptions{})
		if err == nil {
			phase = p.Status.Phase
		}
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed, nil
	})
	out, _ := host.Client.CoreV1().Pods(ns).GetLogs("selftest", &corev1.PodLogOptions{}).DoRaw(ctx)
	if phase != corev1.PodSucceeded || !strings.Contains(string(out), "PASS failover") {
		t.Fatalf("the failover lab's self-test in the cluster: %s after %s; its output:\n%s", phase, time.Since(start).Round(time.Second), out)
	}
	t.Logf("the failover lab's self-test passed in the cluster in %s", time.Since(start).Round(time.Second))

	// The leading replica's pod goes: the other takes the Lease.
	pods, err := host.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: charttest.ServerSelector})
	if err != nil {
		t.Fatal(err)
	}
	var gone string
	for _, p := range pods.Items {
		if strings.HasPrefix(leader, p.Name+"-") {
			gone = p.Name
		}
	}
	if gone == "" {
		t.Fatalf("the Lease holder %q is none of the server's pods", leader)
	}
	start = time.Now()
	if err := host.Client.CoreV1().Pods(ns).Delete(ctx, gone, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	next := poll(t, ctx, "another replica holding the Lease", 2*time.Minute, func() (string, bool) {
		h := holder(ctx, host)
		return h, h != "" && !strings.HasPrefix(h, gone+"-")
	})
	t.Logf("%s leads %s after the leader's pod was deleted", next, time.Since(start).Round(time.Millisecond))
}

func holder(ctx context.Context, host *clustertest.Cluster) string {
	l, err := host.Client.CoordinationV1().Leases("oplab").Get(ctx, "lab-oplab", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// poll waits until cond holds and returns what it last said; the test
// fails with that when within passes.
func poll(t *testing.T, ctx context.Context, what string, within time.Duration, cond func() (string, bool)) string {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, within, true, func(context.Context) (bool, error) {
		var ok bool
		last, ok = cond()
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s (last: %s): %v", what, last, err)
	}
	return last
}
