package cellpod_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"oplab.dev/oplab/internal/cluster/cellpod"
	"oplab.dev/oplab/internal/cluster/clustertest"
)

// TestRunMakesThenStartsAgain plays a control-plane pod's life without
// Kubernetes around it: the first run makes the cluster and serves it on
// the pod's port, SIGTERM (ctx) stops it, and a second run — the replaced
// pod, on the same volume — serves the same cluster with the learner's
// objects.
func TestRunMakesThenStartsAgain(t *testing.T) {
	o := cellpod.Options{
		Name:    "learner",
		DataDir: t.TempDir(),
		BinDir:  clustertest.BinDir(t),
		Listen:  freeAddr(t),
		Logger:  slog.New(slog.NewTextHandler(t.Output(), nil)),
	}
	var cs *kubernetes.Clientset
	life := func(body func(ctx context.Context)) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- cellpod.Run(ctx, o) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		}()
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
			select {
			case err := <-done:
				return false, fmt.Errorf("run ended: %v", err)
			default:
			}
			c, err := net.Dial("tcp", o.Listen)
			if err == nil {
				c.Close()
			}
			return err == nil, nil
		}); err != nil {
			t.Fatal(err)
		}
		var kc bytes.Buffer
		if err := cellpod.Kubeconfig(o, &kc); err != nil {
			t.Fatal(err)
		}
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		// As the pods provider reaches it: through the pod's port, the
		// certificate checked for the name it carries.
		cfg.Host, cfg.TLSClientConfig.ServerName = "https://"+o.Listen, "localhost"
		if cs, err = kubernetes.NewForConfig(cfg); err != nil {
			t.Fatal(err)
		}
		body(ctx)
	}
	life(func(ctx context.Context) {
		if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	life(func(ctx context.Context) {
		got, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "mine", metav1.GetOptions{})
		if err != nil || got.Data["k"] != "v" {
			t.Fatalf("after the second start: %v, %v", got.Data, err)
		}
	})
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
