package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/operator/instance"
)

// noCandidateRetry is how soon a pass that found no replica to promote
// looks again.
const noCandidateRetry = 2 * time.Second

// roles settles which instance is the primary and labels every pod with
// its role. A change of primary is recorded in status.targetPrimary (with
// an optimistic lock) before anything is promoted, and only then carried
// out, so two passes can never choose two primaries.
func (p *pass) roles(ctx context.Context, ms members) error {
	st := &p.pgc.Status
	switch {
	case st.TargetPrimary != "" && st.TargetPrimary != st.CurrentPrimary:
		p.differ("targetPrimary %s differs from currentPrimary %q", st.TargetPrimary, st.CurrentPrimary)
	case st.CurrentPrimary == "":
		if err := p.bootstrap(ctx, ms); err != nil {
			return err
		}
	default:
		if err := p.checkPrimary(ctx, ms); err != nil {
			return err
		}
	}
	if st.TargetPrimary != "" && st.TargetPrimary != st.CurrentPrimary {
		if err := p.switchPrimary(ctx, ms); err != nil {
			return err
		}
	}
	if st.CurrentPrimary == "" || st.TargetPrimary != st.CurrentPrimary {
		return nil
	}
	return p.settleReplicas(ctx, ms)
}

// bootstrap chooses the first primary: an instance that already runs as
// one (the operator lost its status), else pod 0 once it is running.
func (p *pass) bootstrap(ctx context.Context, ms members) error {
	var first *member
	for _, m := range ms {
		if m.usable() && m.status.IsPrimary() {
			first = m
			break
		}
	}
	if first == nil {
		first = ms.get(p.pgc.Name + "-0")
		if first == nil || !first.ready || first.err != nil {
			p.differ("no primary yet; waiting for pod %s-0 to be ready", p.pgc.Name)
			p.setCondition(pgv1.ConditionPrimaryAvailable, metav1.ConditionFalse, pgv1.ReasonBootstrapping, "waiting for pod %s-0 to be ready", p.pgc.Name)
			return nil
		}
	}
	p.differ("no primary yet")
	p.setCondition(pgv1.ConditionPrimaryAvailable, metav1.ConditionFalse, pgv1.ReasonBootstrapping, "initialising %s as the first primary", first.name())
	return p.setTarget(ctx, first.name())
}

// checkPrimary looks at the current primary; when it has been unhealthy for
// failoverDelay it fences it and records the best replica as the target.
// A healthy primary may still be switched over, on request or because a
// scale-down would remove it.
func (p *pass) checkPrimary(ctx context.Context, ms members) error {
	cur := p.pgc.Status.CurrentPrimary
	m := ms.get(cur)
	ok, why := primaryHealth(cur, m)
	if ok {
		p.setCondition(pgv1.ConditionPrimaryAvailable, metav1.ConditionTrue, pgv1.ReasonPrimaryReady, "primary %s is ready", cur)
		return p.switchoverIfWanted(ctx, ms)
	}
	p.differ("%s", why)
	if c := meta.FindStatusCondition(p.pgc.Status.Conditions, pgv1.ConditionPrimaryAvailable); c == nil || c.Status != metav1.ConditionFalse {
		p.setCondition(pgv1.ConditionPrimaryAvailable, metav1.ConditionFalse, pgv1.ReasonPrimaryNotReady, "%s", why)
	}
	since := meta.FindStatusCondition(p.pgc.Status.Conditions, pgv1.ConditionPrimaryAvailable).LastTransitionTime.Time
	if since.Equal(since.Truncate(time.Second)) && !since.Equal(p.now) {
		// Stored times have second precision: count from the end of that
		// second, so the delay is never cut short.
		since = since.Add(time.Second)
	}
	delay := time.Duration(p.pgc.Spec.FailoverDelay) * time.Second
	if wait := since.Add(delay).Sub(p.now); wait > 0 {
		p.done("waiting %s more (failoverDelay %ds) before failing over", wait.Round(100*time.Millisecond), p.pgc.Spec.FailoverDelay)
		p.after(wait)
		return nil
	}
	if m != nil {
		if err := p.label(ctx, m, pgv1.RoleUnhealthy); err != nil {
			return err
		}
	}
	cand := elect(ms, cur, int(p.pgc.Spec.Replicas))
	if cand == nil {
		cand = elect(ms, cur, len(ms)+int(p.pgc.Spec.Replicas))
	}
	if cand == nil {
		return p.restartInPlace(ctx, ms, m, why)
	}
	p.event(corev1.EventTypeWarning, "FailingOver", "Failover", "%s; failing over to %s", why, cand.name())
	p.setCondition(pgv1.ConditionPrimaryAvailable, metav1.ConditionFalse, pgv1.ReasonFailingOver, "%s; promoting %s", why, cand.name())
	if err := p.setTarget(ctx, cand.name()); err != nil {
		return err
	}
	p.event(corev1.EventTypeNormal, "FailoverTarget", "Failover", "elected %s, the replica furthest ahead (WAL %s), as the new primary", cand.name(), cand.status.Position())
	return nil
}

// restartInPlace handles a primary that is unhealthy with no replica to
// take over: when its pod runs again, it is started as primary again (a
// single-instance cluster after its pod was recreated).
func (p *pass) restartInPlace(ctx context.Context, ms members, m *member, why string) error {
	if m == nil || !m.ready || m.err != nil {
		p.done("no ready replica can take over; waiting")
		p.after(noCandidateRetry)
		return nil
	}
	for _, o := range ms {
		if o.role() == pgv1.RolePrimary && o != m {
			if err := p.label(ctx, o, pgv1.RoleUnhealthy); err != nil {
				return err
			}
		}
	}
	if err := p.r.Instance.Promote(ctx, m.pod); err != nil {
		return fmt.Errorf("restart %s as primary: %w", m.name(), err)
	}
	p.done("restarted %s as primary: no replica could take over", m.name())
	p.event(corev1.EventTypeWarning, "PrimaryRestarted", "Failover", "%s; no replica could take over, so %s runs as primary again", why, m.name())
	p.setCondition(pgv1.ConditionPrimaryAvailable, metav1.ConditionTrue, pgv1.ReasonPrimaryReady, "primary %s is ready", m.name())
	m.status, m.err = p.r.Instance.Status(ctx, m.pod)
	return p.label(ctx, m, pgv1.RolePrimary)
}

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

// settleReplicas makes every other running instance a replica of the
// current primary and labels each pod with its role.
func (p *pass) settleReplicas(ctx context.Context, ms members) error {
	prim := ms.get(p.pgc.Status.CurrentPrimary)
	if ok, _ := primaryHealth(p.pgc.Status.CurrentPrimary, prim); !ok {
		return nil // the next pass fails over
	}
	if err := p.label(ctx, prim, pgv1.RolePrimary); err != nil {
		return err
	}
	for _, m := range ms {
		if m == prim || m.pod.DeletionTimestamp != nil {
			continue
		}
		if !m.ready || m.err != nil {
			if err := p.label(ctx, m, pgv1.RoleUnhealthy); err != nil {
				return err
			}
			continue
		}
		s := m.status
		if !s.Initialized || !s.InRecovery || (s.Upstream != "" && s.Upstream != prim.name()) {
			err := p.r.Instance.Follow(ctx, m.pod, prim.pod)
			if errors.Is(err, instance.ErrNeedsRestart) {
				p.event(corev1.EventTypeWarning, "RestartNeeded", "Rejoin", "%s must restart to follow %s: %v", m.name(), prim.name(), err)
				if err := p.label(ctx, m, pgv1.RoleUnhealthy); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return fmt.Errorf("make %s follow %s: %w", m.name(), prim.name(), err)
			}
			p.done("%s now follows %s", m.name(), prim.name())
		}
		if err := p.label(ctx, m, pgv1.RoleReplica); err != nil {
			return err
		}
	}
	return nil
}

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
