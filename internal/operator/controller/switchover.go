package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/operator/instance"
	"oplab.dev/oplab/internal/operator/specs"
)

// stopRetry is how soon a pass that waits for a former primary's pod to
// stop looks again.
const stopRetry = time.Second

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
	stopping, err := p.stopOtherPrimaries(ctx, ms, tgt)
	if err != nil {
		return err
	}
	if len(stopping) > 0 {
		p.done("waiting for %s to stop before %s is promoted", strings.Join(stopping, ", "), tgt.name())
		p.after(stopRetry)
		return nil
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

// stopOtherPrimaries makes sure that no server but tgt can take writes
// before tgt is promoted, so that two primaries never run at once. Every
// other pod labelled primary is fenced (no -rw endpoint). Every other
// server that runs as a primary is demoted or, where it cannot be demoted
// in place (real PostgreSQL), its pod is stopped; so is the pod of a
// current primary that cannot be asked but whose server still runs. It
// returns the pods still stopping: tgt is not promoted until none is.
func (p *pass) stopOtherPrimaries(ctx context.Context, ms members, tgt *member) ([]string, error) {
	var stopping []string
	for _, m := range ms {
		if m == tgt {
			continue
		}
		if m.role() == pgv1.RolePrimary {
			if err := p.label(ctx, m, pgv1.RoleUnhealthy); err != nil {
				return nil, err
			}
		}
		var why error
		switch {
		case m.err == nil && m.status.IsPrimary():
			err := p.r.Instance.Demote(ctx, m.pod)
			if err == nil {
				p.done("demoted %s", m.name())
				continue
			}
			if !errors.Is(err, instance.ErrNeedsRestart) {
				return nil, fmt.Errorf("demote %s before promoting %s: %w", m.name(), tgt.name(), err)
			}
			why = err
		case m.err != nil && m.name() == p.pgc.Status.CurrentPrimary && specs.ServerRunning(m.pod):
			why = fmt.Errorf("its server still runs but cannot be asked: %w", m.err)
		default:
			continue
		}
		stopping = append(stopping, m.name())
		if m.pod.DeletionTimestamp != nil {
			continue // already stopping
		}
		if err := p.restart(ctx, m); err != nil {
			return nil, err
		}
		p.done("stopped %s: %v", m.name(), why)
		p.event(corev1.EventTypeNormal, "InstanceStopped", "Fence", "stopped %s before promoting %s, so that two primaries never run at once: %v", m.name(), tgt.name(), why)
	}
	return stopping, nil
}
