// Command standin plays the operator in the installer's tests: it takes the
// operator's flags, authenticates with KUBECONFIG as the operator would, logs
// what it may and may not do, and serves the health probes once it has
// reached the API server.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	flags := map[string]string{}
	for _, a := range os.Args[1:] {
		k, v, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		flags[k] = v
	}
	fmt.Printf("standin operator starting args=%q pod=%s/%s\n", os.Args[1:], os.Getenv("POD_NAMESPACE"), os.Getenv("POD_NAME"))

	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "load kubeconfig:", err)
		os.Exit(1)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	sts, err := cs.AppsV1().StatefulSets("").List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "list statefulsets:", err)
		os.Exit(1)
	}
	fmt.Printf("listed %d statefulsets\n", len(sts.Items))
	if _, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		fmt.Fprintln(os.Stderr, "list nodes:", err)
	}

	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") }
	mux.HandleFunc("/healthz", ok)
	mux.HandleFunc("/readyz", ok)
	srv := &http.Server{Addr: flags["health-probe-bind-address"], Handler: mux}
	go func() {
		if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			fmt.Fprintln(os.Stderr, "serve probes:", err)
			os.Exit(1)
		}
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			fmt.Println("standin operator stopping")
			_ = srv.Shutdown(context.Background())
			return
		case <-tick.C:
			fmt.Printf("reconcile tick %d\n", n)
		}
	}
}
