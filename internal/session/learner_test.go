package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/fence"
	"oplab.dev/oplab/internal/store"
)

// The kubeconfig a session hands to the web console and the YAML editor
// is the learner's, fenced in from the start, kept beside the admin's (the
// CLI's) and gone with the cluster.
func TestKubeconfigIsTheLearners(t *testing.T) {
	bin := clustertest.BinDir(t) // make test builds pg-operator and hostpod there
	ctx := t.Context()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p, err := cluster.NewProvider(cluster.ProviderWithEmbedded(bin, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Store: st, Provider: p, Course: shippedCourse(t), BinDir: bin, LockDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := m.Start(ctx, StartOptions{Learner: "alice", Lab: "switchover"}, nil)
	if s != nil {
		defer func() {
			if _, err := m.Stop(context.WithoutCancel(ctx), s.ID, "", nil); err != nil {
				t.Errorf("stop: %v", err)
			}
			admin, _ := p.KubeconfigPath(s.Cluster)
			if _, err := os.Stat(fence.KubeconfigPath(admin)); !os.IsNotExist(err) {
				t.Errorf("after stop: got the learner's kubeconfig still there (%v), want it gone with the cluster", err)
			}
		}()
	}
	if err != nil {
		t.Fatal(err)
	}
	data, err := m.Kubeconfig(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := m.KubeconfigPath(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if kept, err := os.ReadFile(fence.KubeconfigPath(admin)); err != nil || string(kept) != string(data) {
		t.Errorf("got the learner's kubeconfig kept %v, want it beside the admin's %s", err, admin)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CertData != nil || cfg.KeyData != nil {
		t.Error("got a client certificate in the learner's kubeconfig, want only its token")
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	who, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil || who.Status.UserInfo.Username != fence.User {
		t.Fatalf("got user %+v (%v), want %s", who.Status.UserInfo, err, fence.User)
	}
	// The lab's own cluster is the learner's to read and change...
	if _, err := cs.CoreV1().Pods("default").Patch(ctx, "prod-db-1", "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"mine":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("relabel an instance's pod: got %v, want allowed", err)
	}
	// ...but not past the fence.
	priv := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "c", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, priv, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "oplab: privileged containers are not allowed") {
		t.Errorf("a privileged pod: got %v, want refused by the fence", err)
	}
}
