package controller

import (
	"context"

	webappv1 "example.com/webapp/api/v1"
)

// ensureFinalizer adds no finalizer.
//
// Broken on purpose: without the finalizer nothing waits for the clean-up,
// and a deleted WebApp stays in the registry.
func (r *WebAppReconciler) ensureFinalizer(ctx context.Context, app *webappv1.WebApp) error {
	return nil
}

// finalize has nothing to do: no WebApp holds the finalizer.
func (r *WebAppReconciler) finalize(ctx context.Context, app *webappv1.WebApp) error {
	return nil
}
