package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	webappv1 "example.com/webapp/api/v1"
)

// configMap makes the WebApp's ConfigMap, which holds its page.
func (r *WebAppReconciler) configMap(ctx context.Context, app *webappv1.WebApp) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{GenerateName: app.Name + "-", Namespace: app.Namespace, Labels: Labels(app)},
		Data:       map[string]string{ContentKey: app.Spec.Content},
	}
	if err := r.Create(ctx, cm); err != nil {
		return fmt.Errorf("ConfigMap: %w", err)
	}
	logf.FromContext(ctx).Info("created", "kind", "ConfigMap", "name", cm.Name)
	return nil
}
