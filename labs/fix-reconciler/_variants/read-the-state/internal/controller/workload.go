package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "example.com/webapp/api/v1"
)

// workload makes the WebApp's Deployment and Service match it on every
// pass, whatever brought the pass, and returns the Deployment as the
// cluster has it, for the status.
func (r *WebAppReconciler) workload(ctx context.Context, app *webappv1.WebApp) (*appsv1.Deployment, error) {
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
	if err := r.apply(ctx, app, dep, func() error {
		mutateDeployment(dep, app)
		return nil
	}); err != nil {
		return nil, err
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
	if err := r.apply(ctx, app, svc, func() error {
		mutateService(svc, app)
		return nil
	}); err != nil {
		return nil, err
	}
	return dep, nil
}
