package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
			if m.role() == "" {
				continue // still starting: behind no Service yet
			}
			if err := p.label(ctx, m, pgv1.RoleUnhealthy); err != nil {
				return err
			}
			continue
		}
		s := m.status
		if !s.Initialized || !s.InRecovery || s.NoUpstream || (s.Upstream != "" && s.Upstream != prim.name()) {
			err := p.r.Instance.Follow(ctx, m.pod, prim.pod)
			if errors.Is(err, instance.ErrNeedsRestart) {
				// A running primary cannot be demoted over SQL: fence it, then
				// delete its pod; the StatefulSet recreates it and its
				// bootstrap script clones the current primary.
				if err := p.restart(ctx, m); err != nil {
					return err
				}
				p.done("restarted %s: it must be cloned to follow %s", m.name(), prim.name())
				p.event(corev1.EventTypeWarning, "InstanceRestarted", "Rejoin", "restarted %s so that it rejoins as a replica of %s: %v", m.name(), prim.name(), err)
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

// restart fences m's pod (no Service endpoint) and deletes it; its
// StatefulSet creates it again and the bootstrap script sets the new pod
// up. The delete is for this pod only (a UID precondition), never for a
// newer pod of the same name.
func (p *pass) restart(ctx context.Context, m *member) error {
	if err := p.label(ctx, m, pgv1.RoleUnhealthy); err != nil {
		return err
	}
	if err := p.r.Client.Delete(ctx, m.pod, client.Preconditions{UID: &m.pod.UID}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("restart %s: %w", m.name(), err)
	}
	return nil
}
