package controller

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	webappv1 "example.com/webapp/api/v1"
)

// ensureFinalizer adds Finalizer to the WebApp, so that once deleted it
// waits for finalize.
func (r *WebAppReconciler) ensureFinalizer(ctx context.Context, app *webappv1.WebApp) error {
	if !controllerutil.AddFinalizer(app, Finalizer) {
		return nil
	}
	if err := r.Update(ctx, app); err != nil {
		return err
	}
	logf.FromContext(ctx).Info("finalizer added")
	return nil
}

// finalize cleans up after a deleted WebApp: it takes it out of the
// registry.
func (r *WebAppReconciler) finalize(ctx context.Context, app *webappv1.WebApp) error {
	if !controllerutil.ContainsFinalizer(app, Finalizer) {
		return nil
	}
	if err := r.unregister(ctx, app); err != nil {
		return err
	}
	logf.FromContext(ctx).Info("removed from the registry")
	return nil
}
