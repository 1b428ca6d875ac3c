package engine

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/operator/install"
)

func (e *Engine) quotaPresent(ctx context.Context, p *lab.QuotaPresent) (bool, string) {
	_, err := e.cs.CoreV1().ResourceQuotas(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Sprintf("ResourceQuota %s/%s was deleted; it must stay (raise it or lower the requests instead)", p.Namespace, p.Name)
	case err != nil:
		return false, fmt.Sprintf("cannot read ResourceQuota %s/%s: %v", p.Namespace, p.Name, err)
	}
	return true, fmt.Sprintf("ResourceQuota %s/%s is still there", p.Namespace, p.Name)
}

func (e *Engine) objectExists(ctx context.Context, p *lab.ObjectExists) (bool, string) {
	ri, err := e.resource(p.APIVersion, p.Kind, p.Namespace)
	if err != nil {
		return false, fmt.Sprintf("%s %s: %v", p.Kind, p.Name, err)
	}
	_, err = ri.Get(ctx, p.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Sprintf("%s %s does not exist", p.Kind, p.Name)
	case err != nil:
		return false, fmt.Sprintf("cannot read %s %s: %v", p.Kind, p.Name, err)
	}
	return true, fmt.Sprintf("%s %s exists", p.Kind, p.Name)
}

// operatorReady reports whether the operator's Deployment has a ready
// replica.
func (e *Engine) operatorReady(ctx context.Context) (bool, string) {
	d, err := e.cs.AppsV1().Deployments(install.Namespace).Get(ctx, install.Deployment, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Sprintf("the operator is not installed (no Deployment %s/%s)", install.Namespace, install.Deployment)
	case err != nil:
		return false, fmt.Sprintf("cannot read the operator's Deployment: %v", err)
	}
	if d.Status.ReadyReplicas == 0 {
		return false, fmt.Sprintf("the operator's Deployment %s/%s has no ready replica", install.Namespace, install.Deployment)
	}
	return true, fmt.Sprintf("the operator's Deployment has %d ready replica(s)", d.Status.ReadyReplicas)
}
