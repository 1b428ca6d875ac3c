// Package controller holds the WebApp reconciler: the part you write.
package controller

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

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

// Labels are the labels of a WebApp's children; the Deployment selects
// its pods by them.
func Labels(app *webappv1.WebApp) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "webapp",
		"app.kubernetes.io/instance":   app.Name,
		"app.kubernetes.io/managed-by": FieldOwner,
	}
}

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
// the objects it owns, changes. It is not told what changed: it reads the
// WebApp as it is now and makes the cluster match it. Called twice in a
// row with nothing changed in between, the second call must change
// nothing.
func (r *WebAppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)

	var app webappv1.WebApp
	if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil // deleted: its children go with it
		}
		return ctrl.Result{}, err
	}
	log.Info("reconciling", "image", app.Spec.Image, "replicas", app.Spec.Replicas)

	// TODO, one exercise at a time:
	//
	//  1. The children. Make a ConfigMap (ContentKey: spec.content), a
	//     Deployment (spec.replicas pods of spec.image listening on
	//     spec.port, the ConfigMap mounted at MountPath, pods labelled
	//     Labels(&app)) and a Service (spec.port to the pods), each named
	//     app.Name. controllerutil.CreateOrUpdate reads, changes only what
	//     differs, and writes only when something did.
	//  2. Owner references: controllerutil.SetControllerReference(&app,
	//     child, r.Scheme) on each child, so that deleting the WebApp
	//     deletes them and their changes wake this reconciler.
	//  3. Status: status.observedGeneration = app.Generation, readyReplicas
	//     from the Deployment, and a Ready condition (meta.SetStatusCondition).
	//     Write it with r.Status().Update, and only when it changed.
	//  4. The finalizer: add Finalizer; keep the key app.Name in the
	//     Registry ConfigMap of the namespace; when app.DeletionTimestamp is
	//     set, remove the key, then the finalizer.
	//  5. Requeue only when needed: return ctrl.Result{} when the cluster
	//     matches; the watches of SetupWithManager bring the next call.
	//     Return every error a write gives you (ctrl.Result{}, err): the
	//     pass is then retried after a back-off. A refused write changed
	//     nothing, so no event brings another call.
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
