// Package controller holds the WebApp reconciler. It runs, and it is
// wrong in five ways, each in a file of its own: configmap.go,
// workload.go, finalizer.go, apply.go and status.go. The lab's exercises
// find them one at a time, from what the controller does.
package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webappv1 "example.com/webapp/api/v1"
)

// Names the controller and the grader agree on.
const (
	// FieldOwner is the field manager of every write of the controller
	// (main.go sets it on the manager's client).
	FieldOwner = "webapp-controller"
	// Finalizer keeps a WebApp until the controller has removed it from
	// the registry.
	Finalizer = "labs.oplab.dev/registry"
	// Registry is the ConfigMap, one per namespace, that lists the live
	// WebApps: key the WebApp's name, value its image. No WebApp owns it.
	Registry = "webapp-registry"
	// ContentKey is the ConfigMap key of the page; ContentHash the pod
	// template annotation that changes with it, so the pods roll.
	ContentKey  = "index.html"
	ContentHash = "labs.oplab.dev/content-hash"
	// MountPath is where the pods see the page.
	MountPath = "/usr/share/webapp"
)

// WebAppReconciler makes the cluster match each WebApp: a ConfigMap with
// its page, a Deployment that serves it and a Service in front, all named
// after the WebApp, in its namespace.
type WebAppReconciler struct {
	client.Client
	Scheme *runtime.Scheme
}

// +kubebuilder:rbac:groups=labs.oplab.dev,resources=webapps,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=labs.oplab.dev,resources=webapps/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=labs.oplab.dev,resources=webapps/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=services;configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconcile is called with the name of a WebApp whenever it, or one of
// the objects it owns, changes. It reads the WebApp and hands each part of
// the work to a function of its own file.
func (r *WebAppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var app webappv1.WebApp
	if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil // gone
		}
		return ctrl.Result{}, err
	}
	if !app.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, &app) // finalizer.go
	}
	if err := r.ensureFinalizer(ctx, &app); err != nil { // finalizer.go
		return ctrl.Result{}, err
	}
	if err := r.register(ctx, &app); err != nil { // registry.go
		return ctrl.Result{}, err
	}
	if err := r.configMap(ctx, &app); err != nil { // configmap.go
		return ctrl.Result{}, err
	}
	dep, err := r.workload(ctx, &app) // workload.go
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.updateStatus(ctx, &app, dep); err != nil { // status.go
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler: it is called for each
// WebApp, and for the WebApp that owns a Deployment, Service or ConfigMap
// that changes.
func (r *WebAppReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&webappv1.WebApp{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		Named("webapp").
		Complete(r)
}
