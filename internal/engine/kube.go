package engine

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/lab"
)

// fieldManager owns what the engine applies with server-side apply.
const fieldManager = "oplab-lab"

// namespace is t's namespace, "default" when the lab names none.
func namespace(t lab.Target) string {
	if t.Namespace == "" {
		return metav1.NamespaceDefault
	}
	return t.Namespace
}

// cluster reads the PostgresCluster t names.
func (e *Engine) cluster(ctx context.Context, t lab.Target) (*pgv1.PostgresCluster, error) {
	return shared(ctx, "postgrescluster/"+namespace(t)+"/"+t.Cluster, func() (*pgv1.PostgresCluster, error) {
		var pgc pgv1.PostgresCluster
		if err := e.c.Get(ctx, types.NamespacedName{Namespace: namespace(t), Name: t.Cluster}, &pgc); err != nil {
			return nil, fmt.Errorf("get PostgresCluster %s/%s: %w", namespace(t), t.Cluster, err)
		}
		return &pgc, nil
	}, (*pgv1.PostgresCluster).DeepCopy)
}

// clusterPods lists the instance pods of the cluster t names.
func (e *Engine) clusterPods(ctx context.Context, t lab.Target) ([]corev1.Pod, error) {
	pods, err := shared(ctx, "pods/"+namespace(t)+"/"+t.Cluster, func() (*corev1.PodList, error) {
		return e.cs.CoreV1().Pods(namespace(t)).List(ctx, metav1.ListOptions{LabelSelector: pgv1.LabelCluster + "=" + t.Cluster})
	}, (*corev1.PodList).DeepCopy)
	if err != nil {
		return nil, fmt.Errorf("list pods of %s: %w", t.Cluster, err)
	}
	return pods.Items, nil
}

// clusterClaims lists the PersistentVolumeClaims of the cluster t names.
func (e *Engine) clusterClaims(ctx context.Context, t lab.Target) ([]corev1.PersistentVolumeClaim, error) {
	pvcs, err := e.cs.CoreV1().PersistentVolumeClaims(namespace(t)).List(ctx, metav1.ListOptions{LabelSelector: pgv1.LabelCluster + "=" + t.Cluster})
	if err != nil {
		return nil, fmt.Errorf("list claims of %s: %w", t.Cluster, err)
	}
	return pvcs.Items, nil
}

// condition returns the condition typ of pgc, or nil.
func condition(pgc *pgv1.PostgresCluster, typ string) *metav1.Condition {
	return meta.FindStatusCondition(pgc.Status.Conditions, typ)
}

// resource maps apiVersion and kind to the dynamic client for it, scoped
// to namespace when the kind is namespaced (namespace "" then means
// "default").
func (e *Engine) resource(apiVersion, kind, namespace string) (dynamic.ResourceInterface, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	m, err := e.c.RESTMapper().RESTMapping(gv.WithKind(kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, fmt.Errorf("kind %s in %s: %w", kind, apiVersion, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespace == "" {
			namespace = metav1.NamespaceDefault
		}
		return e.dyn.Resource(m.Resource).Namespace(namespace), nil
	}
	return e.dyn.Resource(m.Resource), nil
}

// ignoreNotFound drops not-found errors.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
