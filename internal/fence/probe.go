package fence

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// clients reach the API server as the learner.
type clients struct {
	cs  kubernetes.Interface
	dyn dynamic.Interface
}

// probe is a dry-run request of the learner's that one policy must refuse,
// and no other policy nor RBAC: once it is refused by that policy, the API
// server enforces it.
type probe struct {
	policy string
	try    func(ctx context.Context, c clients) error
}

// dryRun makes a request change nothing.
var (
	dryCreate = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	dryPatch  = metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}}
)

// probes returns a probe for every policy whose refusal the learner's RBAC
// lets through. oplab-kwok and oplab-proxy have none (RBAC refuses first):
// Objects applies them before the policies probed last, and the API server
// takes policies in the order they were written (see
// TestLastPolicyIsProbed).
func probes() []probe {
	return []probe{
		{"oplab-crds", func(ctx context.Context, c clients) error {
			crd := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				"metadata": map[string]any{"name": "probes.databases.example.com"},
				"spec": map[string]any{
					"group": "databases.example.com", "scope": "Namespaced",
					"names": map[string]any{"plural": "probes", "singular": "probe", "kind": "Probe", "listKind": "ProbeList"},
					"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
						"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}}},
				},
			}}
			gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
			_, err := c.dyn.Resource(gvr).Create(ctx, crd, dryCreate)
			return err
		}},
		{"oplab-endpointslices", func(ctx context.Context, c clients) error {
			s := &discoveryv1.EndpointSlice{
				ObjectMeta:  metav1.ObjectMeta{GenerateName: "probe-", Labels: map[string]string{discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
				AddressType: discoveryv1.AddressTypeIPv4,
			}
			_, err := c.cs.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Create(ctx, s, dryCreate)
			return err
		}},
		{"oplab-events", func(ctx context.Context, c clients) error {
			ev := &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{GenerateName: "probe-"},
				InvolvedObject: corev1.ObjectReference{Kind: "Namespace", Name: metav1.NamespaceDefault},
				Reason:         "Probe", Message: "the fence's probe", Type: corev1.EventTypeNormal,
			}
			_, err := c.cs.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, ev, dryCreate)
			return err
		}},
		{"oplab-fence", func(ctx context.Context, c clients) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", Labels: map[string]string{Label: "true"}}}
			_, err := c.cs.CoreV1().ConfigMaps(metav1.NamespaceDefault).Create(ctx, cm, dryCreate)
			return err
		}},
		{"oplab-namespaces", func(ctx context.Context, c clients) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"}}
			_, err := c.cs.CoreV1().ConfigMaps(metav1.NamespacePublic).Create(ctx, cm, dryCreate)
			return err
		}},
		{"oplab-owners", func(ctx context.Context, c clients) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "databases.example.com/v1", Kind: "PostgresCluster", Name: "probe",
				UID: "00000000-0000-0000-0000-000000000000", Controller: ptr.To(true),
			}}}}
			_, err := c.cs.CoreV1().ConfigMaps(metav1.NamespaceDefault).Create(ctx, cm, dryCreate)
			return err
		}},
		{"oplab-pods", func(ctx context.Context, c clients) error {
			pod := probePod()
			pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			_, err := c.cs.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, pod, dryCreate)
			return err
		}},
		{"oplab-simulated-servers", func(ctx context.Context, c clients) error {
			pod := probePod()
			pod.Annotations = map[string]string{"sim.databases.example.com/role": "primary"}
			_, err := c.cs.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, pod, dryCreate)
			return err
		}},
		{"oplab-status", func(ctx context.Context, c clients) error {
			_, err := c.cs.CoreV1().Namespaces().Patch(ctx, metav1.NamespaceDefault, types.MergePatchType,
				[]byte(`{"status":{"phase":"Active"}}`), dryPatch, "status")
			return err
		}},
		{"oplab-storage", func(ctx context.Context, c clients) error {
			pv := &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"},
				Spec: corev1.PersistentVolumeSpec{
					Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")},
					AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}},
				},
			}
			_, err := c.cs.CoreV1().PersistentVolumes().Create(ctx, pv, dryCreate)
			return err
		}},
	}
}

// probePod is a pod no policy refuses.
func probePod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "probe-"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
	}
}
