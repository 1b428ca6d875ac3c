package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/operator/install"
)

// installer returns the operator's installer for the target, bounded by
// the deadline of ctx. The installer acts with the cluster's admin
// credentials (from the provider), so an Engine acting as the learner has
// none: a shortcut that installs the operator is not one a learner can take.
func (e *Engine) installer(ctx context.Context) (*install.Installer, error) {
	if e.learner {
		return nil, fmt.Errorf("install the operator: a learner cannot, it takes the cluster's admin: %w", ErrUnsupported)
	}
	if e.t.Provider == nil {
		return nil, fmt.Errorf("install the operator: no cluster provider: %w", ErrUnsupported)
	}
	opts := install.Options{Logger: e.log}
	if d, ok := ctx.Deadline(); ok {
		opts.Timeout = time.Until(d)
	}
	return install.ForCluster(e.t.Provider, e.t.Cluster, e.t.BinDir, opts)
}

func (e *Engine) installOperator(ctx context.Context, p *lab.InstallOperator) error {
	if p.Namespace != "" && p.Namespace != install.Namespace {
		return fmt.Errorf("install the operator into namespace %q: the chart installs into %s: %w", p.Namespace, install.Namespace, ErrUnsupported)
	}
	in, err := e.installer(ctx)
	if err != nil {
		return err
	}
	if _, err := in.Install(ctx); err != nil {
		return err
	}
	return nil
}

// scaleOperator sets the replicas of the operator's Deployment through its
// scale subresource, as `kubectl scale` does: the one change of
// oplab-system a learner may make (see package fence).
func (e *Engine) scaleOperator(ctx context.Context, replicas int32) error {
	op := e.operator()
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	_, err := e.cs.AppsV1().Deployments(op.Namespace).Patch(ctx, op.Deployment, types.MergePatchType, patch, metav1.PatchOptions{}, "scale")
	if err != nil {
		return fmt.Errorf("scale deployment %s/%s to %d: %w", op.Namespace, op.Deployment, replicas, err)
	}
	return nil
}

// stopOperator scales the operator's Deployment to 0 and waits until its
// pods that have not ended are gone (operatorPods) and the Deployment
// reports no ready replica. On the embedded provider the operator's host process runs
// in step with that pod (hostpod), so it stops too, as a container would.
func (e *Engine) stopOperator(ctx context.Context) error {
	if err := e.scaleOperator(ctx, 0); err != nil {
		return err
	}
	var left []string
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		pods, err := e.operatorPods(ctx)
		if err != nil {
			return false, nil
		}
		left = left[:0]
		for _, p := range pods {
			state := string(p.Status.Phase)
			if p.DeletionTimestamp != nil {
				state = "Terminating since " + p.DeletionTimestamp.UTC().Format(time.TimeOnly)
			}
			left = append(left, p.Name+" ("+state+")")
		}
		if len(left) > 0 {
			return false, nil
		}
		ready, _ := e.operatorReady(ctx)
		return !ready, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the operator's pod to be gone (left: %s): %w", strings.Join(left, ", "), err)
	}
	return nil
}

// crashOperator kills the operator's running program at once, as a crash
// would: its pods are deleted with no grace period, so on the embedded
// provider hostpod kills the program without a SIGTERM it could finish its
// work on (see package hostpod). The Deployment's next pod runs a new
// program; crashOperator does not wait for it.
func (e *Engine) crashOperator(ctx context.Context) error {
	op := e.operator()
	d, err := e.cs.AppsV1().Deployments(op.Namespace).Get(ctx, op.Deployment, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read deployment %s/%s: %w", op.Namespace, op.Deployment, err)
	}
	pods, err := e.cs.CoreV1().Pods(op.Namespace).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(d.Spec.Selector)})
	if err != nil {
		return fmt.Errorf("list the pods of deployment %s/%s: %w", op.Namespace, op.Deployment, err)
	}
	now := int64(0)
	killed := 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			continue
		}
		err := e.cs.CoreV1().Pods(op.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &now})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("kill pod %s/%s: %w", op.Namespace, p.Name, err)
		}
		killed++
	}
	if killed == 0 {
		return fmt.Errorf("kill the operator: deployment %s/%s has no running pod", op.Namespace, op.Deployment)
	}
	return nil
}

// startOperator scales the operator's Deployment to 1 and waits until it is
// ready.
func (e *Engine) startOperator(ctx context.Context) error {
	if err := e.scaleOperator(ctx, 1); err != nil {
		return err
	}
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		ok, _ := e.operatorReady(ctx)
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the operator to be ready: %w%s", err, e.operatorPodsWhy(context.WithoutCancel(ctx)))
	}
	return nil
}

// operatorPods are the pods of the operator's Deployment that have not
// ended: a Failed (evicted) or Succeeded pod runs nothing, and no scale
// deletes it.
func (e *Engine) operatorPods(ctx context.Context) ([]corev1.Pod, error) {
	op := e.operator()
	d, err := e.cs.AppsV1().Deployments(op.Namespace).Get(ctx, op.Deployment, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	pods, err := e.cs.CoreV1().Pods(op.Namespace).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(d.Spec.Selector)})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool {
		return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded
	}), nil
}

// operatorPodsWhy says what keeps each of the operator's pods from being
// ready (not scheduled, a container waiting, a condition false), for an
// error that would otherwise say only that the wait ran out.
func (e *Engine) operatorPodsWhy(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pods, err := e.operatorPods(ctx)
	if err != nil {
		return ""
	}
	var why []string
	for _, p := range pods {
		w := p.Name + ": " + string(p.Status.Phase)
		for _, c := range p.Status.Conditions {
			if c.Status != corev1.ConditionTrue && c.Reason != "" {
				w += fmt.Sprintf(", %s %s: %s", c.Type, c.Reason, c.Message)
				break
			}
		}
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Waiting != nil {
				w += fmt.Sprintf(", container %s waiting: %s %s", c.Name, c.State.Waiting.Reason, c.State.Waiting.Message)
			}
		}
		why = append(why, w)
	}
	if len(why) == 0 {
		return " (no pod)"
	}
	return " (" + strings.Join(why, "; ") + ")"
}
