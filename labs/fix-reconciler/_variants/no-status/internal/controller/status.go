package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"

	webappv1 "example.com/webapp/api/v1"
)

// updateStatus writes nothing.
//
// Broken on purpose: with no status written there is no loop, and no
// truth either: the WebApp never says what it has.
func (r *WebAppReconciler) updateStatus(ctx context.Context, app *webappv1.WebApp, dep *appsv1.Deployment) error {
	return nil
}
