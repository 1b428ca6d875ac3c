package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/lab"
)

// pollInterval paces the waits of actions.
const pollInterval = 100 * time.Millisecond

// buildCluster is the PostgresCluster a createCluster step asks for.
func buildCluster(p *lab.CreateCluster) (*pgv1.PostgresCluster, error) {
	pgc := &pgv1.PostgresCluster{
		ObjectMeta: metav1.ObjectMeta{Name: p.Cluster, Namespace: namespace(p.Target)},
		Spec: pgv1.PostgresClusterSpec{
			Replicas:      int32(p.Replicas),
			Version:       p.Version,
			FailoverDelay: int32(p.FailoverDelay.Seconds()),
		},
	}
	if p.Storage.Size != "" {
		q, err := resource.ParseQuantity(p.Storage.Size)
		if err != nil {
			return nil, fmt.Errorf("storage size: %w", err)
		}
		pgc.Spec.Storage.Size = &q
	}
	if p.Storage.StorageClassName != "" {
		pgc.Spec.Storage.StorageClassName = &p.Storage.StorageClassName
	}
	var err error
	if pgc.Spec.Resources.Requests, err = resourceList(p.Requests); err != nil {
		return nil, fmt.Errorf("requests: %w", err)
	}
	if pgc.Spec.Resources.Limits, err = resourceList(p.Limits); err != nil {
		return nil, fmt.Errorf("limits: %w", err)
	}
	return pgc, nil
}

func resourceList(m map[string]string) (corev1.ResourceList, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := corev1.ResourceList{}
	for k, v := range m {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[corev1.ResourceName(k)] = q
	}
	return out, nil
}

// createCluster creates the PostgresCluster, or sets the spec of the one
// that exists to the step's.
func (e *Engine) createCluster(ctx context.Context, p *lab.CreateCluster) error {
	want, err := buildCluster(p)
	if err != nil {
		return err
	}
	err = e.c.Create(ctx, want.DeepCopy())
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("create PostgresCluster %s: %w", p.Cluster, err)
		}
		return nil
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := e.cluster(ctx, p.Target)
		if err != nil {
			return err
		}
		cur.Spec = want.Spec
		return e.c.Update(ctx, cur)
	})
}

// deleteCluster deletes the PostgresCluster and the claims of its
// instances (which a StatefulSet keeps) and waits until its pods are gone.
func (e *Engine) deleteCluster(ctx context.Context, t lab.Target) error {
	pgc := &pgv1.PostgresCluster{ObjectMeta: metav1.ObjectMeta{Name: t.Cluster, Namespace: namespace(t)}}
	if err := e.c.Delete(ctx, pgc, client.PropagationPolicy(metav1.DeletePropagationForeground)); ignoreNotFound(err) != nil {
		return fmt.Errorf("delete PostgresCluster %s: %w", t.Cluster, err)
	}
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		if _, err := e.cluster(ctx, t); !apierrors.IsNotFound(err) {
			return false, nil
		}
		pods, err := e.clusterPods(ctx, t)
		return err == nil && len(pods) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("wait for PostgresCluster %s and its pods to be gone: %w", t.Cluster, err)
	}
	sel := metav1.ListOptions{LabelSelector: pgv1.LabelCluster + "=" + t.Cluster}
	if err := e.cs.CoreV1().PersistentVolumeClaims(namespace(t)).DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
		return fmt.Errorf("delete claims of %s: %w", t.Cluster, err)
	}
	return nil
}

// patchCluster merge-patches the PostgresCluster.
func (e *Engine) patchCluster(ctx context.Context, t lab.Target, patch map[string]any) error {
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	pgc := &pgv1.PostgresCluster{ObjectMeta: metav1.ObjectMeta{Name: t.Cluster, Namespace: namespace(t)}}
	if err := e.c.Patch(ctx, pgc, client.RawPatch(types.MergePatchType, data)); err != nil {
		return fmt.Errorf("patch PostgresCluster %s: %w", t.Cluster, err)
	}
	return nil
}

func (e *Engine) scaleCluster(ctx context.Context, t lab.Target, replicas int32) error {
	return e.patchCluster(ctx, t, map[string]any{"spec": map[string]any{"replicas": replicas}})
}

func (e *Engine) setStorageClass(ctx context.Context, t lab.Target, class string) error {
	var v any = class
	if class == "" {
		v = nil
	}
	return e.patchCluster(ctx, t, map[string]any{"spec": map[string]any{"storage": map[string]any{"storageClassName": v}}})
}

// switchover asks for instance to become the primary and waits until it is.
func (e *Engine) switchover(ctx context.Context, t lab.Target, instance string) error {
	request := func() error {
		return e.patchCluster(ctx, t, map[string]any{"metadata": map[string]any{"annotations": map[string]any{pgv1.AnnotationSwitchoverTo: instance}}})
	}
	if err := request(); err != nil {
		return err
	}
	// The operator takes the request only from a healthy primary to a
	// ready replica, and otherwise rejects it and removes the annotation
	// (SwitchoverRejected). Right after a failover or a restart the
	// instance may still be starting or being cloned: ask again, at most
	// every switchoverRetry, until it is the primary.
	var last string
	asked, rejected := time.Now(), 0
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		pgc, err := e.cluster(ctx, t)
		if err != nil {
			return false, nil
		}
		last = pgc.Status.CurrentPrimary
		if last == instance {
			return true, nil
		}
		if _, pending := pgc.Annotations[pgv1.AnnotationSwitchoverTo]; !pending && time.Since(asked) >= switchoverRetry*e.pace {
			rejected++
			asked = time.Now()
			if err := request(); err != nil {
				e.log.Warn("ask again for a switchover", "instance", instance, "err", err)
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %s to become the primary (it is %q; the operator rejected the switchover %d times: see its SwitchoverRejected events): %w", instance, last, rejected, err)
	}
	return nil
}

// switchoverRetry is how long the switchover action waits before asking
// again for a switchover that the operator rejected (times the pace).
const switchoverRetry = time.Second

// deletePrimaryPod deletes the pod of status.currentPrimary and waits until
// that pod is gone (a pod of the same name may come back).
func (e *Engine) deletePrimaryPod(ctx context.Context, p *lab.DeletePrimaryPod) error {
	pgc, err := e.cluster(ctx, p.Target)
	if err != nil {
		return err
	}
	name := pgc.Status.CurrentPrimary
	if name == "" {
		return fmt.Errorf("PostgresCluster %s has no current primary", p.Cluster)
	}
	pods := e.cs.CoreV1().Pods(namespace(p.Target))
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get primary pod %s: %w", name, err)
	}
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}
	if p.Force {
		opts.GracePeriodSeconds = new(int64)
	}
	if err := pods.Delete(ctx, name, opts); ignoreNotFound(err) != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete primary pod %s: %w", name, err)
	}
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		cur, err := pods.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err) || err == nil && cur.UID != pod.UID, nil
	})
	if err != nil {
		return fmt.Errorf("wait for primary pod %s to be gone: %w", name, err)
	}
	return nil
}

// waitCondition waits until the PostgresCluster's condition matches.
func (e *Engine) waitCondition(ctx context.Context, p *lab.WaitCondition) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		ok, why := e.conditionIs(ctx, p.Target, p.Type, p.Status, p.Reason)
		last = why
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %s %s=%s: %s: %w", p.Cluster, p.Type, p.Status, last, err)
	}
	return nil
}
