package charts_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"oplab.dev/oplab/charts/charttest"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/netpolicy"
)

// TestOplabChartNetworkWall evaluates the cells' network wall as the chart
// deploys oplab, by the NetworkPolicy API's rules (package netpolicy; the
// kind host built here enforces no policy): the server's pods, in the
// release's namespace, reach a cell's API port, and nothing else reaches
// any port of a cell — not the chart's PostgreSQL, not a pod with the
// server's labels in another namespace, not another cell, not an address
// outside — while a cell reaches nothing at all. The policies are the
// pods provider's own, configured as the server in the chart's pod
// configures it; with the cells in the release's namespace and in one of
// their own alike.
func TestOplabChartNetworkWall(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals map[string]any
	}{
		{"cells in a namespace of their own (the default)", nil},
		{"cells in the release's namespace", map[string]any{"cells": map[string]any{"namespace": charttest.Namespace}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := render(t, tc.vals)
			if err != nil {
				t.Fatal(err)
			}
			d := decode[appsv1.Deployment](t, only(t, ms, "Deployment", "lab-oplab"))
			pg := decode[appsv1.StatefulSet](t, only(t, ms, "StatefulSet", "lab-oplab-postgres"))
			release := d.Namespace
			if release != charttest.Namespace {
				t.Fatalf("the server's Deployment is in %q, want the release's namespace %s", release, charttest.Namespace)
			}
			cells := ""
			for _, e := range d.Spec.Template.Spec.Containers[0].Env {
				if e.Name == "OPLAB_PODS_NAMESPACE" {
					cells = e.Value
				}
			}
			if cells == "" {
				t.Fatal("the server's container names no cells' namespace (OPLAB_PODS_NAMESPACE)")
			}
			// The namespaces as the host holds them: the release's (made by
			// whoever installs), the chart's, one more.
			namespaces := map[string]map[string]string{release: {}, "elsewhere": {}}
			for _, m := range ms {
				if m.Kind == "Namespace" {
					namespaces[m.Name] = decode[corev1.Namespace](t, m).Labels
				}
			}
			if _, ok := namespaces[cells]; !ok {
				t.Fatalf("the cells' namespace %s is neither the release's nor made by the chart", cells)
			}

			// The pods provider as the server in that pod makes it: it
			// reaches the cells by their Services, and client-go gives it
			// its own namespace (in the pod, from its ServiceAccount's
			// files; here, from the context of a kubeconfig).
			o, err := cluster.PodsFrom(cluster.PodsHost{Kubeconfig: kubeconfigIn(t, release), Namespace: cells, Reach: cluster.PodsReachService}, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			network := netpolicy.Network{Namespaces: namespaces}
			cell := map[string]netpolicy.Endpoint{}
			for i, name := range []string{"ada", "grace"} {
				pod, np := cluster.PodsCell(o, name)
				network.Policies = append(network.Policies, *np)
				pod.Status.PodIP = fmt.Sprintf("10.244.0.%d", i+1)
				cell[name] = netpolicy.Pod(pod)
			}
			server := netpolicy.Endpoint{Namespace: release, Labels: d.Spec.Template.Labels, IP: "10.244.0.100",
				Ports: d.Spec.Template.Spec.Containers[0].Ports}
			store := netpolicy.Endpoint{Namespace: release, Labels: pg.Spec.Template.Labels, IP: "10.244.0.101"}
			impostor := func(ns string) netpolicy.Endpoint {
				return netpolicy.Endpoint{Namespace: ns, Labels: d.Spec.Template.Labels, IP: "10.244.0.102"}
			}
			api, etcd := netpolicy.TCP(6443), netpolicy.TCP(2379)
			for _, c := range []struct {
				what     string
				from, to netpolicy.Endpoint
				port     netpolicy.Port
				want     bool
			}{
				{"the server to ada's API port", server, cell["ada"], api, true},
				{"the server to grace's API port", server, cell["grace"], api, true},
				{"the server to another port of ada's", server, cell["ada"], etcd, false},
				{"the server to ada's API port over UDP", server, cell["ada"], netpolicy.Port{Protocol: corev1.ProtocolUDP, Number: 6443}, false},
				{"the chart's PostgreSQL to ada", store, cell["ada"], api, false},
				{"the server's labels in another namespace to ada", impostor("elsewhere"), cell["ada"], api, false},
				{"grace to ada's API port", cell["grace"], cell["ada"], api, false},
				{"ada to the server", cell["ada"], server, netpolicy.TCP(8080), false},
				{"ada to the store", cell["ada"], store, netpolicy.TCP(5432), false},
				{"ada to the host's API server", cell["ada"], netpolicy.Outside("10.96.0.1"), netpolicy.TCP(443), false},
				{"ada to an address outside", cell["ada"], netpolicy.Outside("203.0.113.5"), netpolicy.TCP(443), false},
				{"an address outside to ada", netpolicy.Outside("203.0.113.5"), cell["ada"], api, false},
			} {
				got, err := network.Allows(c.from, c.to, c.port)
				if err != nil {
					t.Fatalf("%s: %v", c.what, err)
				}
				if got != c.want {
					t.Errorf("%s (%s/%v to %s/%v on %v): got allowed %v, want %v; the policy: %+v", c.what,
						c.from.Namespace, c.from.Labels, c.to.Namespace, c.to.Labels, c.port, got, c.want, network.Policies[0].Spec)
				}
			}
			if cells != release {
				// In the cells' own namespace, where only oplab makes pods,
				// the server's labels are not the server.
				if got, _ := network.Allows(impostor(cells), cell["ada"], api); got {
					t.Errorf("a pod with the server's labels in the cells' namespace reaches ada")
				}
			}
		})
	}
}

// kubeconfigIn writes a kubeconfig whose context's namespace is ns: to
// client-go, the namespace of whoever uses it, as a pod's own is.
func kubeconfigIn(t *testing.T, ns string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters:
- name: host
  cluster: {server: "https://10.96.0.1:443"}
users:
- name: oplab
  user: {token: "x"}
contexts:
- name: host
  context: {cluster: host, user: oplab, namespace: ` + ns + `}
current-context: host
`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
