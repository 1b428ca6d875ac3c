package controller

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "example.com/webapp/api/v1"
)

// register puts app in its namespace's registry: the registry made if
// missing (owned by no WebApp: it outlives them), else one key patched, and
// nothing written when the key is right.
func (r *WebAppReconciler) register(ctx context.Context, app *webappv1.WebApp) error {
	var reg corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: app.Namespace, Name: Registry}, &reg)
	if apierrors.IsNotFound(err) {
		reg = corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: Registry, Namespace: app.Namespace},
			Data:       map[string]string{app.Name: app.Spec.Image},
		}
		return r.Create(ctx, &reg)
	}
	if err != nil {
		return err
	}
	if image, ok := reg.Data[app.Name]; ok && image == app.Spec.Image {
		return nil
	}
	patch := client.MergeFrom(reg.DeepCopy())
	if reg.Data == nil {
		reg.Data = map[string]string{}
	}
	reg.Data[app.Name] = app.Spec.Image
	return r.Patch(ctx, &reg, patch)
}

// unregister takes app out of its namespace's registry with a patch that
// removes its key.
func (r *WebAppReconciler) unregister(ctx context.Context, app *webappv1.WebApp) error {
	reg := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: Registry, Namespace: app.Namespace}}
	patch, err := json.Marshal(map[string]any{"data": map[string]any{app.Name: nil}})
	if err != nil {
		return err
	}
	return client.IgnoreNotFound(r.Patch(ctx, reg, client.RawPatch(types.MergePatchType, patch)))
}
