package controller

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	webappv1 "example.com/webapp/api/v1"
)

// apply creates or updates child, a child of app, with mutate: it reads
// the child, lets mutate set what app decides, and writes only when
// something differs.
func (r *WebAppReconciler) apply(ctx context.Context, app *webappv1.WebApp, child client.Object, mutate func() error) error {
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, child, mutate)
	if err != nil {
		return fmt.Errorf("%T %s: %w", child, child.GetName(), err)
	}
	if op != controllerutil.OperationResultNone {
		logf.FromContext(ctx).Info(string(op), "kind", fmt.Sprintf("%T", child)[1:], "name", child.GetName())
	}
	return nil
}
