package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"oplab.dev/oplab/internal/lab"
)

// manifestObjects decodes the YAML documents of a manifest.
func manifestObjects(manifest string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(manifest)), 4096)
	var out []*unstructured.Unstructured
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decode manifest: %w", err)
		}
		if len(obj) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}

// applyManifest applies each document with server-side apply.
func (e *Engine) applyManifest(ctx context.Context, p *lab.ApplyManifest) error {
	objs, err := manifestObjects(p.Manifest)
	if err != nil {
		return err
	}
	for _, o := range objs {
		ri, err := e.resource(o.GetAPIVersion(), o.GetKind(), o.GetNamespace())
		if err != nil {
			return err
		}
		if _, err := ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
			return fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// deleteManifest deletes what applyManifest applied.
func (e *Engine) deleteManifest(ctx context.Context, p *lab.ApplyManifest) error {
	objs, err := manifestObjects(p.Manifest)
	if err != nil {
		return err
	}
	for _, o := range objs {
		err := e.deleteObject(ctx, &lab.DeleteObject{APIVersion: o.GetAPIVersion(), Kind: o.GetKind(), Name: o.GetName(), Namespace: o.GetNamespace()})
		if err != nil {
			return err
		}
	}
	return nil
}

// deleteObject deletes one object; an object already gone is not an error.
func (e *Engine) deleteObject(ctx context.Context, p *lab.DeleteObject) error {
	ri, err := e.resource(p.APIVersion, p.Kind, p.Namespace)
	if err != nil {
		return err
	}
	if err := ri.Delete(ctx, p.Name, metav1.DeleteOptions{}); ignoreNotFound(err) != nil {
		return fmt.Errorf("delete %s %s: %w", p.Kind, p.Name, err)
	}
	if !p.Wait {
		return nil
	}
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		_, err := ri.Get(ctx, p.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		return fmt.Errorf("wait for %s %s to be gone: %w", p.Kind, p.Name, err)
	}
	return nil
}

// patchObject merge-patches an object, or its status.
func (e *Engine) patchObject(ctx context.Context, p *lab.PatchObject) error {
	var patch map[string]any
	if err := yaml.Unmarshal([]byte(p.Patch), &patch); err != nil {
		return fmt.Errorf("patch of %s %s: %w", p.Kind, p.Name, err)
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("patch of %s %s: %w", p.Kind, p.Name, err)
	}
	ri, err := e.resource(p.APIVersion, p.Kind, p.Namespace)
	if err != nil {
		return err
	}
	var sub []string
	if p.Subresource != "" {
		sub = []string{p.Subresource}
	}
	if _, err := ri.Patch(ctx, p.Name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: fieldManager}, sub...); err != nil {
		return fmt.Errorf("patch %s %s: %w", p.Kind, p.Name, err)
	}
	return nil
}

// applyQuota creates the ResourceQuota or sets its hard limits to the
// step's.
func (e *Engine) applyQuota(ctx context.Context, p *lab.ApplyQuota) error {
	hard := corev1.ResourceList{}
	for k, v := range p.Hard {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return fmt.Errorf("quota %s: %w", k, err)
		}
		hard[corev1.ResourceName(k)] = q
	}
	quotas := e.cs.CoreV1().ResourceQuotas(p.Namespace)
	rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
	_, err := quotas.Create(ctx, rq, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		var cur *corev1.ResourceQuota
		if cur, err = quotas.Get(ctx, p.Name, metav1.GetOptions{}); err == nil {
			cur.Spec.Hard = hard
			_, err = quotas.Update(ctx, cur, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("apply ResourceQuota %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

func (e *Engine) deleteQuota(ctx context.Context, p *lab.ApplyQuota) error {
	err := e.cs.CoreV1().ResourceQuotas(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
	if ignoreNotFound(err) != nil {
		return fmt.Errorf("delete ResourceQuota %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}
