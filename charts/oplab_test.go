package charts_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"oplab.dev/oplab/charts/charttest"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/operator/install"
)

// render renders oplab's chart as `helm template lab --namespace oplab`.
func render(t *testing.T, vals map[string]any) ([]install.Manifest, error) {
	t.Helper()
	return charttest.Render(t, vals)
}

func decode[T any](t *testing.T, m install.Manifest) *T {
	t.Helper()
	var out T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.Object, &out); err != nil {
		t.Fatalf("%s %s: %v", m.Kind, m.Name, err)
	}
	return &out
}

func only(t *testing.T, ms []install.Manifest, kind, name string) install.Manifest {
	t.Helper()
	for _, m := range ms {
		if m.Kind == kind && m.Name == name {
			return m
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return install.Manifest{}
}

// TestOplabChart renders the chart with its defaults and holds what a
// platform team relies on: two replicas or more behind a Service, a
// disruption budget over them, requests on every container, rights only
// in the cells' namespace (and the Lease's), the store's URL only in a
// Secret, and server pods that the cells' NetworkPolicy lets in.
func TestOplabChart(t *testing.T) {
	ms, err := render(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		switch m.Kind {
		case "ClusterRole", "ClusterRoleBinding":
			t.Errorf("%s %s: the server needs no cluster-wide rights", m.Kind, m.Name)
		case "Role":
			r := decode[rbacv1.Role](t, m)
			if m.Name == "lab-oplab-cells" && r.Namespace != "oplab-cells" {
				t.Errorf("the cells' Role is in %q, want oplab-cells", r.Namespace)
			}
			for _, rule := range r.Rules {
				for _, v := range append(append(rule.Verbs, rule.Resources...), rule.APIGroups...) {
					if v == "*" {
						t.Errorf("Role %s has a wildcard: %+v", m.Name, rule)
					}
				}
			}
		}
	}
	d := decode[appsv1.Deployment](t, only(t, ms, "Deployment", "lab-oplab"))
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas: %v, want 2 or more", d.Spec.Replicas)
	}
	pod := labels.Set(d.Spec.Template.Labels)
	if !labels.SelectorFromSet(cluster.PodsServerLabels()).Matches(pod) {
		t.Errorf("server pods %v are not the ones the cells' NetworkPolicy lets in (%v)", pod, cluster.PodsServerLabels())
	}
	pdb := decode[policyv1.PodDisruptionBudget](t, only(t, ms, "PodDisruptionBudget", "lab-oplab"))
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil || !sel.Matches(pod) {
		t.Errorf("the PodDisruptionBudget's selector %v does not cover the server pods %v", pdb.Spec.Selector, pod)
	}
	svc := decode[corev1.Service](t, only(t, ms, "Service", "lab-oplab"))
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(pod) {
		t.Errorf("the Service does not select the server pods")
	}
	server := d.Spec.Template.Spec.Containers[0]
	args := strings.Join(server.Args, " ")
	for _, want := range []string{"--provider=pods", "--leader-lease=oplab/lab-oplab", "--addr=0.0.0.0:8080"} {
		if !strings.Contains(args, want) {
			t.Errorf("server args %q lack %s", args, want)
		}
	}
	var storeFromSecret, sharedKey bool
	for _, e := range server.Env {
		if strings.Contains(e.Value, "postgres://") {
			t.Errorf("env %s holds the store's URL in the clear", e.Name)
		}
		if e.Name == "OPLAB_STORE_URL" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			storeFromSecret = true
		}
		// Every replica signs cookies with the one key, so a learner
		// signed in by one is signed in on the others.
		if e.Name == "OPLAB_COOKIE_KEY" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
			e.ValueFrom.SecretKeyRef.Name == "lab-oplab-cookie" && e.ValueFrom.SecretKeyRef.Key == "server.key" {
			sharedKey = true
		}
	}
	if !storeFromSecret {
		t.Error("OPLAB_STORE_URL does not come from a Secret")
	}
	if !sharedKey {
		t.Error("OPLAB_COOKIE_KEY does not come from the cookie Secret: each replica would sign with a key of its own")
	}
	pg := decode[appsv1.StatefulSet](t, only(t, ms, "StatefulSet", "lab-oplab-postgres"))
	for _, c := range append(d.Spec.Template.Spec.Containers, pg.Spec.Template.Spec.Containers...) {
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
			t.Errorf("container %s has no CPU or memory request", c.Name)
		}
	}
	// Behind an https Ingress the server is told its public URL, and so
	// makes its cookies Secure.
	ms, err = render(t, map[string]any{"publicURL": "https://lab.school.example"})
	if err != nil {
		t.Fatal(err)
	}
	d = decode[appsv1.Deployment](t, only(t, ms, "Deployment", "lab-oplab"))
	if args := strings.Join(d.Spec.Template.Spec.Containers[0].Args, " "); !strings.Contains(args, "--public-url=https://lab.school.example") {
		t.Errorf("with publicURL, the server's args %q lack --public-url", args)
	}
	if args := strings.Join(server.Args, " "); strings.Contains(args, "--public-url") {
		t.Errorf("without publicURL, the server's args %q name one", args)
	}
}

// TestOplabChartExistingStore: with the chart's PostgreSQL off, the store
// must be named, and then no PostgreSQL is rendered.
func TestOplabChartExistingStore(t *testing.T) {
	if _, err := render(t, map[string]any{"postgres": map[string]any{"enabled": false}}); err == nil || !strings.Contains(err.Error(), "store.existingSecret") {
		t.Errorf("no store at all: got %v, want an error naming store.existingSecret", err)
	}
	ms, err := render(t, map[string]any{"postgres": map[string]any{"enabled": false}, "store": map[string]any{"existingSecret": "campus-db"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Kind == "StatefulSet" {
			t.Errorf("a StatefulSet %s with an existing store", m.Name)
		}
	}
	d := decode[appsv1.Deployment](t, only(t, ms, "Deployment", "lab-oplab"))
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "OPLAB_STORE_URL" && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef.Name != "campus-db") {
			t.Errorf("OPLAB_STORE_URL: %+v, want from Secret campus-db", e)
		}
	}
}

// TestOplabChartRoom: the cells' quota and the right to read nodes, which
// admission on the pods provider measures, are there when asked for and
// the second is nothing more than reading nodes.
func TestOplabChartRoom(t *testing.T) {
	ms, err := render(t, map[string]any{"cells": map[string]any{
		"quota": map[string]any{"cpu": "32", "memory": "160Gi"}, "readNodes": true,
	}})
	if err != nil {
		t.Fatal(err)
	}
	q := decode[corev1.ResourceQuota](t, only(t, ms, "ResourceQuota", "lab-oplab-cells"))
	if q.Namespace != "oplab-cells" || q.Spec.Hard.Name(corev1.ResourceRequestsCPU, "").String() != "32" || q.Spec.Hard.Name(corev1.ResourceRequestsMemory, "").String() != "160Gi" {
		t.Errorf("the cells' quota: %+v in %s, want requests of 32 cores and 160Gi in oplab-cells", q.Spec.Hard, q.Namespace)
	}
	cr := decode[rbacv1.ClusterRole](t, only(t, ms, "ClusterRole", "lab-oplab-oplab-nodes"))
	if len(cr.Rules) != 1 || strings.Join(cr.Rules[0].Resources, ",") != "nodes" || strings.Join(cr.Rules[0].Verbs, ",") != "get,list" {
		t.Errorf("the nodes' ClusterRole: %+v, want get and list on nodes alone", cr.Rules)
	}
	b := decode[rbacv1.ClusterRoleBinding](t, only(t, ms, "ClusterRoleBinding", "lab-oplab-oplab-nodes"))
	if len(b.Subjects) != 1 || b.Subjects[0].Name != "lab-oplab" || b.Subjects[0].Namespace != "oplab" {
		t.Errorf("the nodes' binding: %+v, want the server's ServiceAccount alone", b.Subjects)
	}
	var role *rbacv1.Role
	for _, m := range ms {
		if m.Kind == "Role" && m.Name == "lab-oplab-cells" {
			role = decode[rbacv1.Role](t, m)
		}
	}
	var quotas bool
	for _, r := range role.Rules {
		quotas = quotas || strings.Join(r.Resources, ",") == "resourcequotas" && strings.Join(r.Verbs, ",") == "get,list"
	}
	if !quotas {
		t.Error("the cells' Role does not let the server read the quota")
	}
}
