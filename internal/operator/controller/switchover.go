package controller

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pgv1 "oplab.dev/oplab/api/v1"
)

// switchoverIfWanted starts a switchover from a healthy primary when the
// switchover annotation names another pod, or when a scale-down would
// remove the primary.
func (p *pass) switchoverIfWanted(ctx context.Context, ms members) error {
	cur := p.pgc.Status.CurrentPrimary
	want := p.pgc.Annotations[pgv1.AnnotationSwitchoverTo]
	var target *member
	var why string
	switch {
	case want == cur:
		return p.clearSwitchoverAnnotation(ctx)
	case want != "":
		t := ms.get(want)
		if t == nil || !t.usable() || !t.status.InRecovery || t.ordinal >= int(p.pgc.Spec.Replicas) {
			p.event(corev1.EventTypeWarning, "SwitchoverRejected", "Switchover", "cannot switch over to %s: it is not a ready replica of this cluster", want)
			return p.clearSwitchoverAnnotation(ctx)
		}
		target, why = t, "requested with annotation "+pgv1.AnnotationSwitchoverTo
	case ordinal(p.pgc.Name, cur) >= int(p.pgc.Spec.Replicas):
		target = elect(ms, cur, int(p.pgc.Spec.Replicas))
		why = fmt.Sprintf("scaling down to %d replicas removes %s", p.pgc.Spec.Replicas, cur)
		if target == nil {
			p.differ("%s, but no ready replica below ordinal %d can take over", why, p.pgc.Spec.Replicas)
			p.after(noCandidateRetry)
			return nil
		}
	default:
		return nil
	}
	p.differ("switchover wanted: %s", why)
	if old := ms.get(cur); old != nil {
		if err := p.label(ctx, old, pgv1.RoleUnhealthy); err != nil {
			return err
		}
	}
	p.setCondition(pgv1.ConditionPrimaryAvailable, metav1.ConditionFalse, pgv1.ReasonSwitchingOver, "switching over from %s to %s: %s", cur, target.name(), why)
	if err := p.setTarget(ctx, target.name()); err != nil {
		return err
	}
	p.event(corev1.EventTypeNormal, "SwitchingOver", "Switchover", "switching over from %s to %s: %s", cur, target.name(), why)
	return nil
}

// switchPrimary carries out the change of primary recorded in
// status.targetPrimary: fence any other pod labelled primary, promote the
// target, record it as currentPrimary, then label it primary.
func (p *pass) switchPrimary(ctx context.Context, ms members) error {
	st := &p.pgc.Status
	tgt := ms.get(st.TargetPrimary)
	if tgt == nil || !tgt.ready || tgt.err != nil || (!tgt.status.Initialized && st.CurrentPrimary != "") {
		p.differ("target primary %s is not usable any more", st.TargetPrimary)
		p.done("abandoned the change to %s; will choose again", st.TargetPrimary)
		st.TargetPrimary = st.CurrentPrimary
		st.TargetPrimaryTimestamp = p.nowTime()
		p.after(conflictRetry)
		return p.writeStatus(ctx)
	}
	for _, m := range ms {
		if m != tgt && m.role() == pgv1.RolePrimary {
			if err := p.label(ctx, m, pgv1.RoleUnhealthy); err != nil {
				return err
			}
		}
	}
	if !tgt.status.IsPrimary() {
		if err := p.r.Instance.Promote(ctx, tgt.pod); err != nil {
			return fmt.Errorf("promote %s: %w", tgt.name(), err)
		}
		p.done("promoted %s", tgt.name())
	}
	old := st.CurrentPrimary
	prev := meta.FindStatusCondition(st.Conditions, pgv1.ConditionPrimaryAvailable)
	kind, since := pgv1.ReasonBootstrapping, p.now
	if prev != nil {
		kind, since = prev.Reason, prev.LastTransitionTime.Time
	}
	st.CurrentPrimary = tgt.name()
	st.CurrentPrimaryTimestamp = p.nowTime()
	p.setCondition(pgv1.ConditionPrimaryAvailable, metav1.ConditionTrue, pgv1.ReasonPrimaryReady, "primary %s is ready", tgt.name())
	if err := p.writeStatus(ctx); err != nil {
		return err
	}
	p.done("currentPrimary %q → %s", old, tgt.name())
	tgt.status, tgt.err = p.r.Instance.Status(ctx, tgt.pod)
	if err := p.label(ctx, tgt, pgv1.RolePrimary); err != nil {
		return err
	}
	took := p.r.now().Sub(since)
	switch kind {
	case pgv1.ReasonFailingOver:
		p.r.Metrics.failedOver(p.pgc, took)
		p.event(corev1.EventTypeNormal, "FailoverComplete", "Failover", "%s is the primary; %s was replaced %s after it failed", tgt.name(), old, took.Round(time.Millisecond))
	case pgv1.ReasonSwitchingOver:
		p.event(corev1.EventTypeNormal, "SwitchoverComplete", "Switchover", "%s is the primary in place of %s", tgt.name(), old)
	default:
		p.event(corev1.EventTypeNormal, "PrimaryElected", "Bootstrap", "%s is the first primary", tgt.name())
	}
	if p.pgc.Annotations[pgv1.AnnotationSwitchoverTo] == tgt.name() {
		return p.clearSwitchoverAnnotation(ctx)
	}
	return nil
}
