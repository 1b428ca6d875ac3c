package install

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ErrNotInstalled is returned when the operator is not installed.
var ErrNotInstalled = errors.New("operator not installed")

// Logs copies the operator's log to w, as `kubectl logs -n oplab-system
// deploy/pg-operator` does: from the newest pod of the Deployment (on the
// embedded provider KWOK serves the host process's log file as that pod's).
// With follow it streams until ctx ends.
func Logs(ctx context.Context, cfg *rest.Config, w io.Writer, follow bool) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	pod, err := operatorPod(ctx, cs, true)
	if err != nil {
		return err
	}
	rc, err := cs.CoreV1().Pods(Namespace).GetLogs(pod, &corev1.PodLogOptions{Container: Container, Follow: follow}).Stream(ctx)
	if err != nil {
		return fmt.Errorf("logs of pod %s/%s: %w", Namespace, pod, err)
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil && ctx.Err() == nil {
		return fmt.Errorf("logs of pod %s/%s: %w", Namespace, pod, err)
	}
	return nil
}

// operatorPod names the newest pod of the operator's Deployment that is not
// being deleted and, if running is set, runs.
func operatorPod(ctx context.Context, cs kubernetes.Interface, running bool) (string, error) {
	dep, err := cs.AppsV1().Deployments(Namespace).Get(ctx, Deployment, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("deployment %s/%s: %w: %w", Namespace, Deployment, ErrNotInstalled, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return "", err
	}
	pods, err := cs.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return "", fmt.Errorf("pods of deployment %s/%s: %w", Namespace, Deployment, err)
	}
	live := slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool {
		return running && p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil
	})
	if len(live) == 0 {
		return "", fmt.Errorf("deployment %s/%s has no running pod", Namespace, Deployment)
	}
	newest := slices.MaxFunc(live, func(a, b corev1.Pod) int {
		return a.CreationTimestamp.Compare(b.CreationTimestamp.Time)
	})
	return newest.Name, nil
}
