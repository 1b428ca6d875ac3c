package controllab_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/controllab"
	"oplab.dev/oplab/labs"
)

// kubectl applies manifest to the cluster of kubeconfig with server-side
// apply, as a hand would.
func kubectl(t *testing.T, bin, kubeconfig, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(bin, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestControllerRuns: the reference solution, built in the cell, runs as
// the cluster's controller with its ServiceAccount's rights: it makes a
// WebApp's children, owned and written under its own field manager, and
// logs where the operator log is read; scaled to 0, it stops.
func TestControllerRuns(t *testing.T) {
	k := kit(t)
	bin := clustertest.BinDir(t)
	c := clustertest.New(t)
	ctx := t.Context()
	for _, name := range []string{"crd.yaml", "rbac.yaml", "controller.yaml"} {
		m, err := labs.Manifest("write-reconciler", name)
		if err != nil {
			t.Fatal(err)
		}
		kubectl(t, bin, c.Kubeconfig, m, "apply", "--server-side", "-f", "-")
	}
	kubectl(t, bin, c.Kubeconfig, "", "wait", "--for=condition=Established", "crd/webapps.labs.oplab.dev")

	sol, err := labs.Solution("write-reconciler")
	if err != nil {
		t.Fatal(err)
	}
	files, err := controllab.Overlay(scaffold(t, k), sol)
	if err != nil {
		t.Fatal(err)
	}
	res, err := controllab.Builder{Kit: k, Cells: c.Provider, Cluster: c.Name}.Build(ctx, files)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK {
		t.Fatalf("the solution does not build:\n%s", res.Output)
	}
	ctl := controllab.Controller{
		Cells: c.Provider, Cluster: c.Name,
		Admin: c.Config, AdminKubeconfig: c.Kubeconfig,
		HostPod:   filepath.Join(bin, "hostpod"),
		Namespace: "webapp-system", ServiceAccount: "webapp-controller",
		Selector: "app.kubernetes.io/name=webapp-controller",
	}
	if err := ctl.Start(ctx, res.Binary); err != nil {
		t.Fatal(err)
	}
	defer ctl.Stop(context.WithoutCancel(ctx))

	kubectl(t, bin, c.Kubeconfig, `apiVersion: labs.oplab.dev/v1
kind: WebApp
metadata: {name: hello, namespace: default}
spec: {image: "nginx:1.27", replicas: 2, port: 8080, content: "hello"}
`, "apply", "-f", "-")
	deadline := time.Now().Add(90 * time.Second)
	for {
		d, err := c.Client.AppsV1().Deployments("default").Get(ctx, "hello", metav1.GetOptions{})
		if err == nil {
			owned := false
			for _, o := range d.OwnerReferences {
				owned = owned || o.Kind == "WebApp" && o.Name == "hello" && o.Controller != nil && *o.Controller
			}
			managers := []string{}
			for _, mf := range d.ManagedFields {
				managers = append(managers, mf.Manager)
			}
			if !owned || !strings.Contains(strings.Join(managers, " "), "webapp-controller") {
				t.Fatalf("the Deployment: owners %+v, field managers %v; want the WebApp its controller, written by webapp-controller", d.OwnerReferences, managers)
			}
			break
		}
		if !apierrors.IsNotFound(err) || time.Now().After(deadline) {
			ws, _ := c.Provider.Workspace(ctx, c.Name)
			log, _ := os.ReadFile(controllab.Log(ws).Log())
			hp, _ := os.ReadFile(filepath.Join(ws, "run", "hostpod.log"))
			t.Fatalf("no Deployment hello: %v\ncontroller log:\n%s\nhostpod:\n%s", err, log, hp)
		}
		time.Sleep(500 * time.Millisecond)
	}
	ws, err := c.Provider.Workspace(ctx, c.Name)
	if err != nil {
		t.Fatal(err)
	}
	if log, err := os.ReadFile(controllab.Log(ws).Log()); err != nil || !strings.Contains(string(log), "hello") {
		t.Errorf("the controller's log names no WebApp hello (%v):\n%s", err, log)
	}
}
