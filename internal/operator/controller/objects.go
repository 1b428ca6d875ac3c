package controller

import (
	"context"
	"fmt"
	"maps"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"oplab.dev/oplab/internal/operator/specs"
)

// objects creates the owned objects that are missing and updates those
// whose built spec changed (by the spec-hash annotation), and returns the
// StatefulSet as stored.
func (p *pass) objects(ctx context.Context, ms members) (*appsv1.StatefulSet, error) {
	pgc := p.pgc
	if err := p.secret(ctx); err != nil {
		return nil, err
	}
	for _, o := range []client.Object{
		specs.ConfigMap(pgc),
		specs.HeadlessService(pgc),
		specs.Service(pgc, "primary"),
		specs.Service(pgc, "replica"),
		specs.PodDisruptionBudget(pgc),
	} {
		if _, err := p.apply(ctx, o, nil); err != nil {
			return nil, err
		}
	}
	if err := p.cronJob(ctx); err != nil {
		return nil, err
	}
	want := specs.StatefulSet(pgc, stsReplicas(pgc))
	stored, err := p.apply(ctx, want, func(existing client.Object) string {
		sts := existing.(*appsv1.StatefulSet)
		have := ptr.Deref(sts.Spec.Replicas, 1)
		if have == *want.Spec.Replicas {
			return ""
		}
		sts.Spec.Replicas = want.Spec.Replicas
		return fmt.Sprintf("replicas %d → %d", have, *want.Spec.Replicas)
	})
	if err != nil {
		return nil, err
	}
	return stored.(*appsv1.StatefulSet), nil
}

// secret creates the credentials Secret when it is missing. An existing
// Secret is never rewritten: its password is in use.
func (p *pass) secret(ctx context.Context) error {
	s := specs.Secret(p.pgc, "")
	err := p.r.APIReader.Get(ctx, client.ObjectKeyFromObject(s), &corev1.Secret{})
	if err == nil || !apierrors.IsNotFound(err) {
		if err != nil {
			return fmt.Errorf("get Secret %s: %w", s.Name, err)
		}
		return nil
	}
	s = specs.Secret(p.pgc, specs.NewPassword())
	if err := p.r.Client.Create(ctx, s); err != nil {
		return fmt.Errorf("create Secret %s: %w", s.Name, err)
	}
	p.differ("Secret %s missing", s.Name)
	p.done("created Secret %s with a generated password", s.Name)
	return nil
}

// cronJob applies the backup CronJob, or deletes it when spec.backup is
// gone.
func (p *pass) cronJob(ctx context.Context) error {
	if cj := specs.CronJob(p.pgc); cj != nil {
		_, err := p.apply(ctx, cj, nil)
		return err
	}
	var cj batchv1.CronJob
	key := client.ObjectKey{Namespace: p.pgc.Namespace, Name: specs.CronJobName(p.pgc)}
	if err := p.r.Client.Get(ctx, key, &cj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("get CronJob %s: %w", key.Name, err)
	}
	if !metav1.IsControlledBy(&cj, p.pgc) {
		return nil
	}
	if err := p.r.Client.Delete(ctx, &cj, client.Preconditions{UID: &cj.UID}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete CronJob %s: %w", cj.Name, err)
	}
	p.differ("spec.backup removed")
	p.done("deleted CronJob %s", cj.Name)
	return nil
}

// apply creates want when it does not exist, or updates the stored object
// when the spec hash differs or extra (for fields kept out of the hash)
// reports a change. An unchanged object is not written. It returns the
// object as stored.
func (p *pass) apply(ctx context.Context, want client.Object, extra func(existing client.Object) string) (client.Object, error) {
	kind := reflect.TypeOf(want).Elem().Name()
	have := reflect.New(reflect.TypeOf(want).Elem()).Interface().(client.Object)
	if err := p.r.Client.Get(ctx, client.ObjectKeyFromObject(want), have); err != nil {
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("get %s %s: %w", kind, want.GetName(), err)
		}
		if err := p.r.Client.Create(ctx, want); err != nil {
			return nil, fmt.Errorf("create %s %s: %w", kind, want.GetName(), err)
		}
		p.differ("%s %s missing", kind, want.GetName())
		p.done("created %s %s", kind, want.GetName())
		return want, nil
	}
	if !metav1.IsControlledBy(have, p.pgc) {
		return nil, fmt.Errorf("%s %s exists and is not owned by PostgresCluster %s", kind, want.GetName(), p.pgc.Name)
	}
	var changes []string
	if h := specs.AnnotationSpecHash; have.GetAnnotations()[h] != want.GetAnnotations()[h] {
		copySpec(have, want)
		changes = append(changes, "spec")
	}
	if extra != nil {
		if c := extra(have); c != "" {
			changes = append(changes, c)
		}
	}
	if len(changes) == 0 {
		return have, nil
	}
	if err := p.r.Client.Update(ctx, have); err != nil {
		return nil, fmt.Errorf("update %s %s: %w", kind, want.GetName(), err)
	}
	p.differ("%s %s: %v differ", kind, want.GetName(), changes)
	p.done("updated %s %s", kind, want.GetName())
	return have, nil
}

// copySpec copies the operator-managed fields of want onto have, leaving
// the fields the API server owns (clusterIP, immutable selectors and claim
// templates) as stored.
func copySpec(have, want client.Object) {
	ann := have.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	maps.Copy(ann, want.GetAnnotations())
	have.SetAnnotations(ann)
	lbl := have.GetLabels()
	if lbl == nil {
		lbl = map[string]string{}
	}
	maps.Copy(lbl, want.GetLabels())
	have.SetLabels(lbl)
	switch h := have.(type) {
	case *appsv1.StatefulSet:
		w := want.(*appsv1.StatefulSet)
		h.Spec.Template = w.Spec.Template
		h.Spec.UpdateStrategy = w.Spec.UpdateStrategy
	case *corev1.Service:
		w := want.(*corev1.Service)
		h.Spec.Selector = w.Spec.Selector
		h.Spec.Ports = w.Spec.Ports
		h.Spec.PublishNotReadyAddresses = w.Spec.PublishNotReadyAddresses
	case *corev1.ConfigMap:
		h.Data = want.(*corev1.ConfigMap).Data
	case *batchv1.CronJob:
		h.Spec = want.(*batchv1.CronJob).Spec
	case *policyv1.PodDisruptionBudget:
		h.Spec = want.(*policyv1.PodDisruptionBudget).Spec
	}
}
