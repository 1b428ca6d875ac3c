package install

import (
	"context"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// fieldManager owns the fields oplab applies with server-side apply.
const fieldManager = "oplab"

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// applyCRDs applies the chart's CRDs with server-side apply and waits until
// they are established. Helm installs crds/ only on first install and never
// upgrades them; applying them here makes an upgrade carry CRD changes too.
// It returns when the last of them became established.
func (in *Installer) applyCRDs(ctx context.Context, c *chart.Chart) (time.Time, error) {
	var established time.Time
	crds := c.CRDObjects()
	if len(crds) == 0 {
		return established, nil
	}
	dyn, err := dynamic.NewForConfig(in.cfg)
	if err != nil {
		return established, err
	}
	for _, f := range crds {
		var obj unstructured.Unstructured
		if err := yaml.Unmarshal(f.File.Data, &obj.Object); err != nil {
			return established, fmt.Errorf("decode CRD %s: %w", f.Filename, err)
		}
		if obj.Object == nil {
			continue
		}
		name := obj.GetName()
		in.log.Info("applying CRD", "name", name)
		if _, err := dyn.Resource(crdGVR).Apply(ctx, name, &obj, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
			return established, fmt.Errorf("apply CRD %s: %w", name, err)
		}
		at, err := waitEstablished(ctx, dyn, name)
		if err != nil {
			return established, err
		}
		if at.After(established) {
			established = at
		}
	}
	return established, nil
}

// waitEstablished waits until the CRD name is established and returns when
// it became so.
func waitEstablished(ctx context.Context, dyn dynamic.Interface, name string) (time.Time, error) {
	var at time.Time
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		u, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
			return false, err
		}
		for _, c := range crd.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				at = c.LastTransitionTime.Time
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return at, fmt.Errorf("wait for CRD %s to be established: %w", name, err)
	}
	return at, nil
}

// crdCreateDelay is how long after a CRD is established the API server
// holds back creates of its custom resources: a create that arrives sooner
// sleeps 2 s first (apiextensions-apiserver's crdHandler, so that in a
// highly available control plane every API server has seen the CRD).
const crdCreateDelay = 2 * time.Second

// waitCreatable waits out the rest of crdCreateDelay after established, so
// that the first custom resource made after Install is not held back for
// the whole delay.
func waitCreatable(ctx context.Context, established time.Time) error {
	d := time.Until(established.Add(crdCreateDelay))
	if established.IsZero() || d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// deleteNamespace deletes the operator's namespace (made by the install with
// CreateNamespace) and waits until it is gone.
func (in *Installer) deleteNamespace(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(in.cfg)
	if err != nil {
		return err
	}
	ns := in.rel.Namespace
	err = cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete namespace %s: %w", ns, err)
	}
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("wait for namespace %s to be deleted: %w", ns, err)
	}
	return nil
}

// waitDeployment waits until the operator's Deployment has rolled out its
// latest generation and every replica is available, as `kubectl rollout
// status` does.
func (in *Installer) waitDeployment(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(in.cfg)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(in.rel.Namespace).Get(ctx, in.rel.Deployment, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		st := d.Status
		last = fmt.Sprintf("generation %d observed %d, %d/%d updated, %d available", d.Generation, st.ObservedGeneration, st.UpdatedReplicas, want, st.AvailableReplicas)
		return st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want &&
			st.Replicas == want && st.AvailableReplicas == want, nil
	})
	if err != nil {
		return fmt.Errorf("wait for deployment %s/%s to roll out (%s): %w", in.rel.Namespace, in.rel.Deployment, last, err)
	}
	return nil
}
