package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "example.com/webapp/api/v1"
)

// configMap makes the WebApp's ConfigMap, which holds its page: found by
// its name, written only when it differs.
func (r *WebAppReconciler) configMap(ctx context.Context, app *webappv1.WebApp) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
	return r.apply(ctx, app, cm, func() error {
		setLabels(&cm.ObjectMeta, Labels(app))
		cm.Data = map[string]string{ContentKey: app.Spec.Content}
		return nil
	})
}
