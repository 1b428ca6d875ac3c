package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "example.com/webapp/api/v1"
)

// configMap makes the WebApp's ConfigMap, which holds its page.
//
// Broken on purpose: it finds the ConfigMap by its name, but deletes it
// and makes it again on every pass.
func (r *WebAppReconciler) configMap(ctx context.Context, app *webappv1.WebApp) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace, Labels: Labels(app)},
		Data:       map[string]string{ContentKey: app.Spec.Content},
	}
	if err := r.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("ConfigMap: %w", err)
	}
	if err := r.Create(ctx, cm); err != nil {
		return fmt.Errorf("ConfigMap: %w", err)
	}
	return nil
}
