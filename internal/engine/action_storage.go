package engine

import (
	"context"
	"fmt"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/lab"
)

// defaultClassAnnotation marks the cluster's default StorageClass.
const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// copyStorageClass creates p.Name with what provisions volumes in p.From
// (or the default class): provisioner, parameters, reclaim policy, binding
// mode and expansion. The copy is never itself the default.
func (e *Engine) copyStorageClass(ctx context.Context, p *lab.CopyStorageClass) error {
	src, err := e.sourceClass(ctx, p.From)
	if err != nil {
		return err
	}
	sc := &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: p.Name},
		Provisioner:          src.Provisioner,
		Parameters:           src.Parameters,
		ReclaimPolicy:        src.ReclaimPolicy,
		VolumeBindingMode:    src.VolumeBindingMode,
		AllowVolumeExpansion: src.AllowVolumeExpansion,
		MountOptions:         src.MountOptions,
	}
	if _, err := e.cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("create StorageClass %s as a copy of %s: %w", p.Name, src.Name, err)
	}
	return nil
}

// sourceClass is the class called name, or the default class when name is
// empty (the newest, as the API server's admission picks, when several are).
func (e *Engine) sourceClass(ctx context.Context, name string) (*storagev1.StorageClass, error) {
	if name != "" {
		sc, err := e.cs.StorageV1().StorageClasses().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("read StorageClass %s: %w", name, err)
		}
		return sc, nil
	}
	list, err := e.cs.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list StorageClasses: %w", err)
	}
	var def *storagev1.StorageClass
	for i := range list.Items {
		sc := &list.Items[i]
		if sc.Annotations[defaultClassAnnotation] != "true" {
			continue
		}
		if def == nil || sc.CreationTimestamp.After(def.CreationTimestamp.Time) {
			def = sc
		}
	}
	if def == nil {
		return nil, fmt.Errorf("the cluster has no default StorageClass to copy")
	}
	return def, nil
}
