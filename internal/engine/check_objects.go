package engine

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/lab"
)

func (e *Engine) objectExists(ctx context.Context, p *lab.ObjectExists) (bool, string) {
	ri, err := e.resource(p.APIVersion, p.Kind, p.Namespace)
	if err != nil {
		return false, fmt.Sprintf("%s %s: %v", p.Kind, p.Name, err)
	}
	obj, err := ri.Get(ctx, p.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Sprintf("%s %s does not exist", p.Kind, p.Name)
	case err != nil:
		return false, fmt.Sprintf("cannot read %s %s: %v", p.Kind, p.Name, err)
	}
	if p.OwnedBy == "" {
		return true, fmt.Sprintf("%s %s exists", p.Kind, p.Name)
	}
	ref := metav1.GetControllerOf(obj)
	if ref == nil || ref.Kind != "PostgresCluster" || ref.Name != p.OwnedBy {
		return false, fmt.Sprintf("%s %s exists, but PostgresCluster %s does not control it: the operator makes it, not a hand", p.Kind, p.Name, p.OwnedBy)
	}
	return true, fmt.Sprintf("%s %s exists, made for PostgresCluster %s", p.Kind, p.Name, p.OwnedBy)
}

// operatorReady reports whether the operator's Deployment has a ready
// replica.
func (e *Engine) operatorReady(ctx context.Context) (bool, string) {
	op := e.operator()
	d, err := e.cs.AppsV1().Deployments(op.Namespace).Get(ctx, op.Deployment, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Sprintf("the operator is not installed (no Deployment %s/%s)", op.Namespace, op.Deployment)
	case err != nil:
		return false, fmt.Sprintf("cannot read the operator's Deployment: %v", err)
	}
	if d.Status.ReadyReplicas == 0 {
		return false, fmt.Sprintf("the operator's Deployment %s/%s has no ready replica", op.Namespace, op.Deployment)
	}
	return true, fmt.Sprintf("the operator's Deployment has %d ready replica(s)", d.Status.ReadyReplicas)
}
