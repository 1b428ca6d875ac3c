package cellpod_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"oplab.dev/oplab/internal/cluster/cellpod"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/console"
	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/internal/oplog"
)

// TestRunMakesThenStartsAgain plays a control-plane pod's life without
// Kubernetes around it: the first run makes the cluster and serves it on
// the pod's port, SIGTERM (ctx) stops it, and a second run — the replaced
// pod, on the same volume — serves the same cluster with the learner's
// objects.
func TestRunMakesThenStartsAgain(t *testing.T) {
	o := cellOptions(t)
	var cs *kubernetes.Clientset
	life := func(body func(ctx context.Context)) {
		t.Helper()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		cfg, stop := serve(t, ctx, o, cellpod.Run)
		defer stop()
		var err error
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

// serve runs a cell's containers (runs) as its pod does, waits until the
// pod's port answers, and returns the admin configuration as the pods
// provider reaches it: through the pod's port, the certificate checked for
// the name it carries. stop ends the containers and reports their errors.
func serve(t *testing.T, ctx context.Context, o cellpod.Options, runs ...func(context.Context, cellpod.Options) error) (cfg *rest.Config, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	errs := make(chan error, len(runs))
	for _, run := range runs {
		go func() { errs <- run(ctx, o) }()
	}
	stop = func() {
		cancel()
		for range runs {
			if err := <-errs; err != nil {
				t.Errorf("cell: %v", err)
			}
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		c, err := net.Dial("tcp", o.Listen)
		if err == nil {
			c.Close()
		}
		return err == nil, nil
	}); err != nil {
		stop()
		t.Fatal(err)
	}
	var kc bytes.Buffer
	if err := cellpod.Kubeconfig(o, &kc); err != nil {
		stop()
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc.Bytes())
	if err != nil {
		stop()
		t.Fatal(err)
	}
	cfg.Host, cfg.TLSClientConfig.ServerName = "https://"+o.Listen, "localhost"
	return cfg, stop
}

// cellOptions are a cell's for a test: its own volume, a free port.
func cellOptions(t *testing.T) cellpod.Options {
	return cellpod.Options{
		Name:    "learner",
		DataDir: t.TempDir(),
		BinDir:  clustertest.BinDir(t),
		Listen:  freeAddr(t),
		Logger:  slog.New(slog.NewTextHandler(t.Output(), nil)),
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestOperatorPlaysThePodInTheCell runs a cell's two containers as the pods
// provider's pod does — the control plane, and the operator container
// waiting for its chart — installs the reference chart as oplab does on
// that provider, and sees the operator reconcile a PostgresCluster with
// its ServiceAccount's rights, its log served as its pod's.
func TestOperatorPlaysThePodInTheCell(t *testing.T) {
	o := cellOptions(t)
	o.OperatorDir = filepath.Join(o.DataDir, "operator")
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	cfg, stop := serve(t, ctx, o, cellpod.Run, cellpod.Operator)
	defer stop()

	start := time.Now()
	in := install.New(cfg, install.Options{
		Cell:   &install.Cell{Dir: o.OperatorDir},
		Values: map[string]any{"instanceMode": "simulated"},
	})
	if _, err := in.Install(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("operator installed and running in the cell in %s", time.Since(start).Round(time.Millisecond))

	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "databases.example.com/v1", "kind": "PostgresCluster",
		"metadata": map[string]any{"name": "db", "namespace": "default"},
		"spec":     map[string]any{"replicas": int64(1), "version": "15"},
	}}
	gvr := schema.GroupVersionResource{Group: "databases.example.com", Version: "v1", Resource: "postgresclusters"}
	if _, err := dyn.Resource(gvr).Namespace("default").Create(ctx, pc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		sts, err := cs.AppsV1().StatefulSets("default").List(ctx, metav1.ListOptions{})
		return err == nil && len(sts.Items) > 0, nil
	}); err != nil {
		t.Fatalf("the operator in the cell made no StatefulSet for the PostgresCluster: %v", err)
	}
	// Its log is its pod's, as `kubectl logs` reads it.
	var lines int
	if err := (install.PodLog{Config: cfg}).Lines(ctx, false, func(oplog.Line) error { lines++; return nil }); err != nil || lines == 0 {
		t.Errorf("the operator's pod log: %d lines (%v)", lines, err)
	}
}

// TestConsoleInTheCell runs a web console command as the cell's console
// container does: with the kubeconfig it is given on stdin — here the
// learner's, naming the API server as oplab's server reaches it, an
// address the cell cannot resolve — pointed at the cell's own API server.
func TestConsoleInTheCell(t *testing.T) {
	o := cellOptions(t)
	_, stop := serve(t, t.Context(), o, cellpod.Run)
	defer stop()
	var admin bytes.Buffer
	if err := cellpod.Kubeconfig(o, &admin); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(admin.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://cell-learner.oplab-cells.svc.invalid:6443"
	}
	given, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	argv := console.Call{Args: []string{"get", "namespace", "default", "-o", "name"}, Kubeconfig: len(given), Limit: time.Minute, Beat: time.Second}.Argv()
	var stdout, stderr bytes.Buffer
	// stdin stays open while the caller is there.
	r, w := io.Pipe()
	go func() {
		w.Write(given)
		<-t.Context().Done()
		w.Close()
	}()
	code := cellpod.Console(t.Context(), o, argv, r, &stdout, &stderr)
	if code != 0 || strings.TrimSpace(stdout.String()) != "namespace/default" {
		t.Fatalf("console in the cell: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	// A kubeconfig the cell cannot read runs nothing.
	stdout.Reset()
	stderr.Reset()
	bad := []byte("not a kubeconfig")
	argv = console.Call{Args: []string{"get", "namespaces"}, Kubeconfig: len(bad), Limit: time.Minute, Beat: time.Second}.Argv()
	if code := cellpod.Console(t.Context(), o, argv, bytes.NewReader(bad), &stdout, &stderr); code != 125 || !strings.Contains(stderr.String(), "kubeconfig") {
		t.Fatalf("a bad kubeconfig: exit %d, stderr %q", code, stderr.String())
	}
}
