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
	if real := runningPrimary(ms, cur); real != nil {
		return p.adopt(ctx, real, why)
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
	p.done("elected %s: the ready replica furthest ahead (WAL %s)", cand.name(), cand.status.Position())
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

// runningPrimary returns the one member other than cur whose server runs
// as a primary and can serve, or nil when there is none or more than one
// (then failover fences them all but the one it promotes).
func runningPrimary(ms members, cur string) *member {
	var found *member
	for _, m := range ms {
		if m.name() == cur || !m.usable() || !m.status.IsPrimary() {
			continue
		}
		if found != nil {
			return nil
		}
		found = m
	}
	return found
}

// adopt records m, whose server already runs as the primary, as the
// current primary, when status names another instance (a status edited by
// hand, or written before the operator lost track): the servers are the
// truth and the status only a record of them, so nothing is promoted or
// stopped.
func (p *pass) adopt(ctx context.Context, m *member, why string) error {
	st := &p.pgc.Status
	old := st.CurrentPrimary
	p.differ("%s, but %s runs as the primary", why, m.name())
	st.CurrentPrimary, st.TargetPrimary = m.name(), m.name()
	st.CurrentPrimaryTimestamp = p.nowTime()
	st.TargetPrimaryTimestamp = st.CurrentPrimaryTimestamp
	p.setCondition(pgv1.ConditionPrimaryAvailable, metav1.ConditionTrue, pgv1.ReasonPrimaryReady, "primary %s is ready", m.name())
	if err := p.writeStatus(ctx); err != nil {
		return err
	}
	p.done("currentPrimary %q → %s: adopted the running primary", old, m.name())
	p.event(corev1.EventTypeWarning, "PrimaryAdopted", "Failover", "status named %s as the primary, but %s runs as the primary: it stays the primary (%s)", old, m.name(), why)
	return nil
}
