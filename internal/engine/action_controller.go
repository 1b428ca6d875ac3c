package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"oplab.dev/oplab/internal/controllab"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/labs"
)

// A lab whose learner writes the controller (lab.LearnerOperator) runs the
// learner's program where its operator would run: installController makes
// its place, runController builds a module and runs it there. In a
// session the learner builds their own; the self-test builds the
// reference solution and each broken variant.

// learnerRelease is where the controller of lab id runs, as an operator
// release: what operatorReady, stopOperator and startOperator act on.
func learnerRelease(id string) (install.Release, error) {
	pl, err := controllab.LabPlace(id)
	if err != nil {
		return install.Release{}, err
	}
	return pl.Release(id), nil
}

// learnerLog is the log of lab id's learner's controller, where
// controllab.LogOf reads it.
func (e *Engine) learnerLog(id string) LogSource {
	if e.t.Provider == nil {
		return nil
	}
	src, err := controllab.LogOf(context.Background(), e.t.Provider, e.t.Cluster, id, e.cfg)
	if err != nil {
		return nil
	}
	return Since{Log: src}
}

// installController applies the lab's CRD, its controller's ClusterRole,
// and its controller.yaml, waits until the CRD is served, and makes sure
// the API server can refuse the controller's writes on purpose.
func (e *Engine) installController(ctx context.Context, id string) error {
	if e.learner {
		return fmt.Errorf("install the lab's controller: a learner cannot, it takes the cluster's admin: %w", ErrUnsupported)
	}
	for _, name := range []string{"crd.yaml", "rbac.yaml", "controller.yaml"} {
		m, err := labs.Manifest(id, name)
		if err != nil {
			return err
		}
		if err := e.applyManifest(ctx, &lab.ApplyManifest{Manifest: m}); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if name == "crd.yaml" {
			if err := e.waitServed(ctx, webAppGVR); err != nil {
				return err
			}
		}
	}
	// The conflictsRetried check's refusals, where the API server does
	// not make them itself.
	return e.ensureConflictWindow(ctx)
}

// runController builds the module r names, of lab id, in the cluster's
// cell and runs it as the controller, in place of the one that runs. A
// module that does not compile is an error that carries the compiler's
// output.
func (e *Engine) runController(ctx context.Context, id string, r *lab.RunController) error {
	if e.learner {
		// Any program is one a learner could write and run: the server
		// builds and runs it for them, with the admin's credentials only
		// to mint the controller's token.
		if e.admin == nil {
			return fmt.Errorf("run a module as the controller: %w", ErrUnsupported)
		}
		return e.admin.runController(ctx, id, r)
	}
	if e.t.Provider == nil {
		return fmt.Errorf("run a module as the controller: no cluster provider: %w", ErrUnsupported)
	}
	ctl, err := e.controller(id)
	if err != nil {
		return err
	}
	// A module of the lab is built once per cluster: the self-test runs
	// the reference solution after every exercise.
	ws, err := e.t.Provider.Workspace(ctx, e.t.Cluster)
	if err != nil {
		return err
	}
	module := r.Name()
	kept := filepath.Join(ws, "modules", id, module)
	if _, err := os.Stat(kept); err == nil {
		return e.startModule(ctx, ctl, kept)
	}
	k, err := controllab.FindKit(e.t.BinDir)
	if err != nil {
		return err
	}
	files, err := controllab.LabModule(id, r.Module, r.With, k)
	if err != nil {
		return err
	}
	if e.burstBuilds {
		lifted, err := e.t.Provider.Unsettle(ctx, e.t.Cluster)
		if err != nil {
			return err
		}
		if lifted {
			defer func() {
				if err := e.t.Provider.Settle(context.WithoutCancel(ctx), e.t.Cluster); err != nil {
					e.log.Warn("cap the cell again after a build", "cluster", e.t.Cluster, "err", err)
				}
			}()
		}
	}
	b, err := e.buildAndRun(ctx, id, k, files, false)
	if err != nil {
		return fmt.Errorf("build %s: %w", module, err)
	}
	if !b.OK {
		return fmt.Errorf("build %s: it does not compile:\n%s", module, b.Output)
	}
	e.log.Debug("built a module of the lab", "lab", id, "module", module, "took", b.Took)
	// A link: the next build replaces the program, not this file.
	if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
		return err
	}
	if err := os.Link(b.Binary, kept); err != nil {
		return err
	}
	return e.startModule(ctx, ctl, kept)
}

// startModule runs the program at prog as the controller and waits until
// its controller-runtime manager has started its workers, so that what
// follows (the goals) is answered by it, not by the start's first passes
// over every WebApp.
func (e *Engine) startModule(ctx context.Context, ctl controllab.Runner, prog string) error {
	// The log is read from a second before the start: a pod's log is
	// stamped to the second, and the run before's lines are older.
	since := time.Now().Truncate(time.Second)
	if err := ctl.Start(ctx, prog); err != nil {
		return err
	}
	log := e.logSource()
	err := wait.PollUntilContextTimeout(ctx, pollInterval, e.budget(2*time.Minute), true, func(ctx context.Context) (bool, error) {
		lines, err := log.Lines(ctx, since)
		return err == nil && slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "Starting workers") }), nil
	})
	if err != nil {
		return fmt.Errorf("the controller did not start its workers: %w", err)
	}
	// Its first passes, over every WebApp there is, settle.
	time.Sleep(time.Second)
	return nil
}

// BuildAndRun builds files, the learner's module of lab l, in the
// cluster's cell and, when it compiles and run is set, runs the program as
// the controller in place of the one that runs, which runs until then. A
// module that does not compile is a Build with OK false, not an error.
func (e *Engine) BuildAndRun(ctx context.Context, l *lab.Lab, files controllab.Files, run bool) (*controllab.Build, error) {
	e.use(l)
	if !l.LearnerWritesController() {
		return nil, fmt.Errorf("lab %s: the learner writes no controller in it: %w", l.ID, ErrUnsupported)
	}
	if e.t.Provider == nil {
		return nil, fmt.Errorf("build the controller: no cluster provider: %w", ErrUnsupported)
	}
	k, err := controllab.FindKit(e.t.BinDir)
	if err != nil {
		return nil, err
	}
	return e.buildAndRun(ctx, l.ID, k, files, run)
}

func (e *Engine) buildAndRun(ctx context.Context, id string, k controllab.Kit, files controllab.Files, run bool) (*controllab.Build, error) {
	b, err := controllab.Builder{Kit: k, Cells: e.t.Provider, Cluster: e.t.Cluster}.Build(ctx, files)
	if err != nil || !b.OK || !run {
		return b, err
	}
	ctl, err := e.controller(id)
	if err != nil {
		return nil, err
	}
	return b, ctl.Start(ctx, b.Binary)
}

// Module returns the learner's module of lab l: the files last built in
// the cluster's cell, or the lab's scaffold before the first build; with
// the kit's go.mod and go.sum either way.
func (e *Engine) Module(ctx context.Context, l *lab.Lab) (controllab.Files, error) {
	if !l.LearnerWritesController() {
		return nil, fmt.Errorf("lab %s: the learner writes no controller in it: %w", l.ID, ErrUnsupported)
	}
	if e.t.Provider == nil {
		return nil, fmt.Errorf("read the module: no cluster provider: %w", ErrUnsupported)
	}
	k, err := controllab.FindKit(e.t.BinDir)
	if err != nil {
		return nil, err
	}
	ws, err := e.t.Provider.Workspace(ctx, e.t.Cluster)
	if err != nil {
		return nil, err
	}
	if f, err := controllab.Built(ws); err == nil {
		return f, nil
	}
	return controllab.LabModule(l.ID, lab.ModuleScaffold, nil, k)
}

// controller is lab id's controller on the engine's cluster: a host
// process where the provider runs them, else the pod of the lab's
// Deployment.
func (e *Engine) controller(id string) (controllab.Runner, error) {
	pl, err := controllab.LabPlace(id)
	if err != nil {
		return nil, err
	}
	if !e.t.Provider.Info().Capabilities.HostProcesses {
		return controllab.PodController{Cells: e.t.Provider, Cluster: e.t.Cluster, Admin: e.cfg, Place: pl}, nil
	}
	kc, err := e.t.Provider.KubeconfigPath(e.t.Cluster)
	if err != nil {
		return nil, err
	}
	if e.t.BinDir == "" {
		return nil, errors.New("run the controller: no bin directory for hostpod")
	}
	return controllab.Controller{
		Cells: e.t.Provider, Cluster: e.t.Cluster,
		Admin: e.cfg, AdminKubeconfig: kc,
		HostPod:   filepath.Join(e.t.BinDir, "hostpod"),
		Namespace: pl.Namespace, ServiceAccount: pl.ServiceAccount, Selector: pl.Selector,
	}, nil
}

// waitServed waits until the API server serves gvr (a CRD just made).
func (e *Engine) waitServed(ctx context.Context, gvr schema.GroupVersionResource) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		_, last = e.dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %s to be served: %v (%w)", gvr.GroupResource(), last, err)
	}
	return nil
}

// uninstallController stops lab id's controller and removes what
// installController made: the WebApps first (their finalizers taken off,
// as no controller will), then the controller's place, its rights and the
// CRD.
func (e *Engine) uninstallController(ctx context.Context, id string) error {
	if e.t.Provider != nil {
		if ctl, err := e.controller(id); err == nil {
			if err := ctl.Stop(ctx); err != nil {
				return err
			}
		}
	}
	apps := e.dyn.Resource(webAppGVR)
	list, err := apps.List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, u := range list.Items {
			ri := apps.Namespace(u.GetNamespace())
			_, _ = ri.Patch(ctx, u.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{FieldManager: fieldManager})
			if err := ri.Delete(ctx, u.GetName(), metav1.DeleteOptions{}); ignoreNotFound(err) != nil {
				return err
			}
		}
	}
	for _, name := range []string{"controller.yaml", "rbac.yaml", "crd.yaml"} {
		m, err := labs.Manifest(id, name)
		if err != nil {
			return err
		}
		if err := e.deleteManifest(ctx, &lab.ApplyManifest{Manifest: m}); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	// The namespace and the CRD go after their contents: a lab installed
	// next (another whose learner writes the controller, on the same
	// cluster) could not make its own in them while they are terminating.
	pl, err := controllab.LabPlace(id)
	if err != nil {
		return err
	}
	crd := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		_, nsErr := e.cs.CoreV1().Namespaces().Get(ctx, pl.Namespace, metav1.GetOptions{})
		_, crdErr := e.dyn.Resource(crd).Get(ctx, webAppGVR.GroupResource().String(), metav1.GetOptions{})
		return apierrors.IsNotFound(nsErr) && apierrors.IsNotFound(crdErr), nil
	})
	if err != nil {
		return fmt.Errorf("wait for namespace %s and the WebApp CRD to be gone: %w", pl.Namespace, err)
	}
	return nil
}
