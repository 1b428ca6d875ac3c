package controller_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"oplab.dev/oplab/cmd/pg-operator/app"
)

// testProgram runs the operator as cmd/pg-operator does, through app.Run
// and its flags, and checks its probes, its metrics and its leader lease.
func testProgram(t *testing.T, e *env, ns string) {
	metricsAddr, probeAddr := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, []string{
			"--kubeconfig", e.kubeconfig, "--watch-namespace", ns, "--instance-mode", "simulated",
			"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", probeAddr,
			"--leader-election-namespace", ns,
		}, logs)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v", err)
		}
		if t.Failed() {
			t.Logf("operator log:\n%s", logs.String())
		}
	})
	if err := e.cl.Create(context.Background(), cluster(ns, "db", 2)); err != nil {
		t.Fatal(err)
	}
	e.waitReady(t, ns, "db", 2, 90*time.Second)

	var lease coordinationv1.Lease
	if err := e.cl.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "pg-operator.databases.example.com"}, &lease); err != nil {
		t.Errorf("leader election lease: %v", err)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := httpGet(t, "http://"+probeAddr+path); code != http.StatusOK {
			t.Errorf("GET %s: got %d %q, want 200", path, code, body)
		}
	}
	e.waitFor(t, 10*time.Second, "replica gauges on /metrics", func() (bool, string) {
		_, body := httpGet(t, "http://"+metricsAddr+"/metrics")
		want := []string{
			fmt.Sprintf(`pg_operator_desired_replicas{cluster="db",namespace=%q} 2`, ns),
			fmt.Sprintf(`pg_operator_ready_replicas{cluster="db",namespace=%q} 2`, ns),
			`controller_runtime_reconcile_total{controller="postgrescluster"`,
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				return false, "missing " + w
			}
		}
		return true, ""
	})
	if !strings.Contains(logs.String(), "instances=simulated") {
		t.Errorf("the log does not say the instances are simulated")
	}
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func httpGet(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
