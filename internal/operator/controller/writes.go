package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pgv1 "oplab.dev/oplab/api/v1"
)

// setTarget records name as status.targetPrimary. The status update
// carries the resourceVersion read at the start of the pass: if anything
// changed the cluster since, it fails with a conflict and nothing is
// promoted.
func (p *pass) setTarget(ctx context.Context, name string) error {
	p.pgc.Status.TargetPrimary = name
	p.pgc.Status.TargetPrimaryTimestamp = p.nowTime()
	if err := p.writeStatus(ctx); err != nil {
		return err
	}
	p.done("targetPrimary → %s", name)
	return nil
}

// label sets the pod's role label. The patch is guarded by the pod's
// resourceVersion, so a decision made on a stale view fails instead of
// relabelling a pod that changed meanwhile.
func (p *pass) label(ctx context.Context, m *member, role string) error {
	if m.role() == role {
		return nil
	}
	before := m.pod.DeepCopy()
	if m.pod.Labels == nil {
		m.pod.Labels = map[string]string{}
	}
	old := m.pod.Labels[pgv1.LabelRole]
	m.pod.Labels[pgv1.LabelRole] = role
	if err := p.r.Client.Patch(ctx, m.pod, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) && role == pgv1.RoleUnhealthy {
			p.done("%s is gone", m.name())
			return nil // a pod that no longer exists serves nobody
		}
		return fmt.Errorf("label pod %s %s=%s: %w", m.name(), pgv1.LabelRole, role, err)
	}
	if old == "" {
		old = "none"
	}
	p.done("labelled %s role %s → %s", m.name(), old, role)
	return nil
}

// clearSwitchoverAnnotation removes the switchover request once it is met
// or rejected.
func (p *pass) clearSwitchoverAnnotation(ctx context.Context) error {
	if _, ok := p.pgc.Annotations[pgv1.AnnotationSwitchoverTo]; !ok {
		return nil
	}
	status := p.pgc.Status.DeepCopy() // the patch response carries the stored status
	before := p.pgc.DeepCopy()
	delete(p.pgc.Annotations, pgv1.AnnotationSwitchoverTo)
	if err := p.r.Client.Patch(ctx, p.pgc, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("remove annotation %s: %w", pgv1.AnnotationSwitchoverTo, err)
	}
	p.pgc.Status = *status
	p.done("removed annotation %s", pgv1.AnnotationSwitchoverTo)
	return nil
}

func (p *pass) nowTime() *metav1.Time {
	t := metav1.NewTime(p.now)
	return &t
}

func (p *pass) setCondition(typ string, s metav1.ConditionStatus, reason, format string, a ...any) {
	meta.SetStatusCondition(&p.pgc.Status.Conditions, metav1.Condition{
		Type: typ, Status: s, Reason: reason, Message: fmt.Sprintf(format, a...),
		ObservedGeneration: p.pgc.Generation, LastTransitionTime: metav1.NewTime(p.now),
	})
}

func (p *pass) event(typ, reason, action, format string, a ...any) {
	if p.r.Recorder != nil {
		p.r.Recorder.Eventf(p.pgc, nil, typ, reason, action, format, a...)
	}
}
