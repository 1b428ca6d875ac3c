package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	webappv1 "example.com/webapp/api/v1"
)

// updateStatus reports what the WebApp has: the generation it was made
// for, its Deployment's ready replicas, and a Ready condition. It builds
// the status on a copy and writes it only when it changed: every write is
// an update of the WebApp, which brings another pass.
func (r *WebAppReconciler) updateStatus(ctx context.Context, app *webappv1.WebApp, dep *appsv1.Deployment) error {
	want := app.Status.DeepCopy()
	want.ObservedGeneration = app.Generation
	want.ReadyReplicas = dep.Status.ReadyReplicas
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Progressing",
		Message:            fmt.Sprintf("%d of %d replicas ready", dep.Status.ReadyReplicas, app.Spec.Replicas),
		ObservedGeneration: app.Generation}
	if dep.Status.ObservedGeneration >= dep.Generation && dep.Status.ReadyReplicas >= app.Spec.Replicas {
		ready.Status, ready.Reason = metav1.ConditionTrue, "Available"
	}
	meta.SetStatusCondition(&want.Conditions, ready)
	if equality.Semantic.DeepEqual(want, &app.Status) {
		return nil
	}
	app.Status = *want
	if err := r.Status().Update(ctx, app); err != nil {
		return err
	}
	logf.FromContext(ctx).Info("status updated", "readyReplicas", want.ReadyReplicas, "ready", ready.Status)
	return nil
}
