// Package controller holds the WebApp reconciler: the part you write.
//
// Broken on purpose: a write of a child or of the status that fails is logged and dropped, and the pass returns nil, so controller-runtime never retries it; only the next change of the WebApp or a child brings another pass.
package controller

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
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

// Reconcile makes the cluster match the WebApp as it is now, whatever
// changed: it reads, compares and writes only what differs, so a second
// call with nothing changed writes nothing.
func (r *WebAppReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)

	var app webappv1.WebApp
	if err := r.Get(ctx, req.NamespacedName, &app); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, nil // gone, and its children with it
		}
		return ctrl.Result{}, err
	}

	// Being deleted: take it out of the registry, then let it go.
	if !app.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(&app, Finalizer) {
			return ctrl.Result{}, nil
		}
		if err := r.unregister(ctx, &app); err != nil {
			return ctrl.Result{}, err
		}
		controllerutil.RemoveFinalizer(&app, Finalizer)
		if err := r.Update(ctx, &app); err != nil {
			return ctrl.Result{}, err
		}
		log.Info("removed from the registry; finalizer removed")
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(&app, Finalizer) {
		if err := r.Update(ctx, &app); err != nil {
			return ctrl.Result{}, err
		}
		log.Info("finalizer added")
	}
	if err := r.register(ctx, &app); err != nil {
		return ctrl.Result{}, err
	}

	// The children: each read, changed where it differs, written only
	// then, and owned by the WebApp.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
	if err := r.apply(ctx, &app, cm, func() error {
		setLabels(&cm.ObjectMeta, Labels(&app))
		cm.Data = map[string]string{ContentKey: app.Spec.Content}
		return nil
	}); err != nil {
		log.Error(err, "write failed; carrying on")
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
	if err := r.apply(ctx, &app, dep, func() error {
		mutateDeployment(dep, &app)
		return nil
	}); err != nil {
		log.Error(err, "write failed; carrying on")
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: app.Name, Namespace: app.Namespace}}
	if err := r.apply(ctx, &app, svc, func() error {
		setLabels(&svc.ObjectMeta, Labels(&app))
		svc.Spec.Selector = selector(&app)
		svc.Spec.Ports = []corev1.ServicePort{{
			Name: "http", Protocol: corev1.ProtocolTCP,
			Port: app.Spec.Port, TargetPort: intstr.FromInt32(app.Spec.Port),
		}}
		return nil
	}); err != nil {
		log.Error(err, "write failed; carrying on")
	}

	// The status, written only when it changed.
	want := app.Status.DeepCopy()
	want.ObservedGeneration = app.Generation
	want.ReadyReplicas = dep.Status.ReadyReplicas
	ready := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Progressing",
		Message:            fmt.Sprintf("%d of %d replicas ready", dep.Status.ReadyReplicas, app.Spec.Replicas),
		ObservedGeneration: app.Generation}
	if dep.Status.ObservedGeneration >= dep.Generation && dep.Status.ReadyReplicas >= app.Spec.Replicas {
		ready.Status, ready.Reason = metav1.ConditionTrue, "Available"
	}
	meta.SetStatusCondition(&want.Conditions, ready)
	if !equality.Semantic.DeepEqual(want, &app.Status) {
		app.Status = *want
		if err := r.Status().Update(ctx, &app); err != nil {
			log.Error(err, "status update failed; carrying on")
			return ctrl.Result{}, nil
		}
		log.Info("status updated", "readyReplicas", want.ReadyReplicas, "ready", ready.Status)
	}
	// Nothing to wait for: the Deployment's changes bring the next call.
	return ctrl.Result{}, nil
}

// apply creates or updates child, owned by app, with mutate.
func (r *WebAppReconciler) apply(ctx context.Context, app *webappv1.WebApp, child client.Object, mutate func() error) error {
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, child, func() error {
		if err := mutate(); err != nil {
			return err
		}
		return controllerutil.SetControllerReference(app, child, r.Scheme)
	})
	if err != nil {
		return fmt.Errorf("%T %s: %w", child, child.GetName(), err)
	}
	if op != controllerutil.OperationResultNone {
		logf.FromContext(ctx).Info(string(op), "kind", fmt.Sprintf("%T", child)[1:], "name", child.GetName())
	}
	return nil
}

// mutateDeployment sets the fields of dep that app decides, and only
// those: what the API server defaults stays as it is, or every pass
// would write.
func mutateDeployment(dep *appsv1.Deployment, app *webappv1.WebApp) {
	setLabels(&dep.ObjectMeta, Labels(app))
	replicas := app.Spec.Replicas
	dep.Spec.Replicas = &replicas
	if dep.Spec.Selector == nil { // immutable once made
		dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: selector(app)}
	}
	setLabels(&dep.Spec.Template.ObjectMeta, Labels(app))
	if dep.Spec.Template.Annotations == nil {
		dep.Spec.Template.Annotations = map[string]string{}
	}
	sum := sha256.Sum256([]byte(app.Spec.Content))
	dep.Spec.Template.Annotations[ContentHash] = hex.EncodeToString(sum[:])[:16]

	pod := &dep.Spec.Template.Spec
	var vol *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == "content" {
			vol = &pod.Volumes[i]
		}
	}
	if vol == nil {
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "content"})
		vol = &pod.Volumes[len(pod.Volumes)-1]
	}
	if vol.ConfigMap == nil {
		vol.VolumeSource = corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}
	}
	vol.ConfigMap.Name = app.Name

	var c *corev1.Container
	for i := range pod.Containers {
		if pod.Containers[i].Name == "web" {
			c = &pod.Containers[i]
		}
	}
	if c == nil {
		pod.Containers = append(pod.Containers, corev1.Container{Name: "web"})
		c = &pod.Containers[len(pod.Containers)-1]
	}
	c.Image = app.Spec.Image
	c.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: app.Spec.Port, Protocol: corev1.ProtocolTCP}}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "content", MountPath: MountPath, ReadOnly: true}}
}

// register puts app in its namespace's registry: the registry made if
// missing (owned by no WebApp: it outlives them), else one key patched, and
// nothing written when the key is right. A patch of one key does not
// conflict with another WebApp's.
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
// removes its key, whatever the cache last saw of the registry: a key
// written a moment ago may not be in the cache yet, and removing a key
// that is not there changes nothing.
func (r *WebAppReconciler) unregister(ctx context.Context, app *webappv1.WebApp) error {
	reg := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: Registry, Namespace: app.Namespace}}
	patch, err := json.Marshal(map[string]any{"data": map[string]any{app.Name: nil}})
	if err != nil {
		return err
	}
	return client.IgnoreNotFound(r.Patch(ctx, reg, client.RawPatch(types.MergePatchType, patch)))
}

// selector picks app's pods.
func selector(app *webappv1.WebApp) map[string]string {
	return map[string]string{"app.kubernetes.io/name": "webapp", "app.kubernetes.io/instance": app.Name}
}

// setLabels sets want's labels on m, keeping the others.
func setLabels(m *metav1.ObjectMeta, want map[string]string) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	for k, v := range want {
		m.Labels[k] = v
	}
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
