package controller

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	webappv1 "example.com/webapp/api/v1"
)

// updateStatus reports what the WebApp has: the generation it was made
// for, its Deployment's ready replicas, and a Ready condition.
func (r *WebAppReconciler) updateStatus(ctx context.Context, app *webappv1.WebApp, dep *appsv1.Deployment) error {
	app.Status.ObservedGeneration = app.Generation
	app.Status.ReadyReplicas = dep.Status.ReadyReplicas
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Progressing",
		Message:            fmt.Sprintf("%d of %d replicas ready at %s", dep.Status.ReadyReplicas, app.Spec.Replicas, time.Now().Format(time.RFC3339Nano)),
		ObservedGeneration: app.Generation}
	if dep.Status.ObservedGeneration >= dep.Generation && dep.Status.ReadyReplicas >= app.Spec.Replicas {
		ready.Status, ready.Reason = metav1.ConditionTrue, "Available"
	}
	meta.SetStatusCondition(&app.Status.Conditions, ready)
	if err := r.Status().Update(ctx, app); err != nil {
		return err
	}
	logf.FromContext(ctx).Info("status updated", "readyReplicas", app.Status.ReadyReplicas, "ready", ready.Status)
	return nil
}
