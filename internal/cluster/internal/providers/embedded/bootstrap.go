package embedded

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// kwokStages makes KWOK initialise the node, keep its lease, and move pods
// through Running, Ready, Succeeded and deletion as a kubelet would.
//
//go:embed kwok-stages.yaml
var kwokStages []byte

// kwokCRDs are applied before KWOK starts (it is run with
// --enable-crds=Logs,ClusterLogs).
//
//go:embed kwok-crds.yaml
var kwokCRDs []byte

// Names of the objects every embedded cluster starts with.
const (
	NodeName         = "oplab-worker"
	StorageClassName = "standard"
	// hostPathProvisioner is the in-tree provisioner enabled with
	// --enable-hostpath-provisioner. It makes directories under
	// /tmp/hostpath_pv, which Delete removes.
	hostPathProvisioner = "kubernetes.io/host-path"
	hostPathRoot        = "/tmp/hostpath_pv/"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// applyCRDs server-side applies every CustomResourceDefinition in data and
// waits until the API server serves them.
func applyCRDs(ctx context.Context, cfg *rest.Config, data []byte) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var names []string
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("decode CRD: %w", err)
		}
		if obj.Object == nil {
			continue
		}
		if _, err := dyn.Resource(crdGVR).Apply(ctx, obj.GetName(), &obj, metav1.ApplyOptions{FieldManager: "oplab", Force: true}); err != nil {
			return fmt.Errorf("apply CRD %s: %w", obj.GetName(), err)
		}
		names = append(names, obj.GetName())
	}
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			crd, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", name, err)
		}
	}
	return nil
}

// createStorageClass makes the default StorageClass.
func createStorageClass(ctx context.Context, cs kubernetes.Interface) error {
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        StorageClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       hostPathProvisioner,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create StorageClass %s: %w", sc.Name, err)
	}
	return nil
}

// createNode makes the node KWOK plays.
func createNode(ctx context.Context, cs kubernetes.Interface) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("128Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        NodeName,
			Annotations: map[string]string{kwokNodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": NodeName,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node %s: %w", node.Name, err)
	}
	return nil
}

// waitUsable waits until the node is Ready and the default ServiceAccount
// exists: before that, pods are not scheduled or not admitted.
func waitUsable(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("node %s not Ready after %s (see kube-controlplane.log: KWOK plays its kubelet)", NodeName, timeout)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("default ServiceAccount not created after %s (see kube-controlplane.log)", timeout)
	}
	return nil
}

// hostPathDirs lists the directories the host-path provisioner made for the
// cluster's volumes.
func hostPathDirs(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, pv := range pvs.Items {
		if hp := pv.Spec.HostPath; hp != nil && strings.HasPrefix(hp.Path, hostPathRoot) && len(hp.Path) > len(hostPathRoot) {
			dirs = append(dirs, hp.Path)
		}
	}
	return dirs, nil
}
