package controller

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/operator/specs"
)

// setStatus fills in the counts, the phase and the Ready and Progressing
// conditions from what the pass saw.
func (p *pass) setStatus(ms members, sts *appsv1.StatefulSet, t *trouble) {
	st := &p.pgc.Status
	st.ObservedGeneration = p.pgc.Generation
	st.Replicas = int32(len(ms))
	st.ReadyReplicas = ms.countReady()
	st.Selector = labels.SelectorFromSet(specs.SelectorLabels(p.pgc)).String()
	st.InstanceControl = p.r.Instance.Mode()
	want := p.pgc.Spec.Replicas
	primaryOK := meta.IsStatusConditionTrue(st.Conditions, pgv1.ConditionPrimaryAvailable) && st.CurrentPrimary == st.TargetPrimary
	pa := meta.FindStatusCondition(st.Conditions, pgv1.ConditionPrimaryAvailable)
	switching := pa != nil && (pa.Reason == pgv1.ReasonFailingOver || pa.Reason == pgv1.ReasonSwitchingOver)
	counts := fmt.Sprintf("%d of %d instances ready", st.ReadyReplicas, want)

	switch {
	case t != nil:
		p.setCondition(pgv1.ConditionProgressing, metav1.ConditionFalse, t.reason, "%s", t.message)
	case switching:
		p.setCondition(pgv1.ConditionProgressing, metav1.ConditionTrue, pa.Reason, "%s", pa.Message)
	case st.CurrentPrimary == "":
		p.setCondition(pgv1.ConditionProgressing, metav1.ConditionTrue, pgv1.ReasonBootstrapping, "%s", counts)
	case st.Replicas != want || st.ReadyReplicas != want || sts.Status.ReadyReplicas != st.ReadyReplicas:
		p.setCondition(pgv1.ConditionProgressing, metav1.ConditionTrue, pgv1.ReasonScaling, "%s", counts)
	default:
		p.setCondition(pgv1.ConditionProgressing, metav1.ConditionFalse, pgv1.ReasonUpToDate, "%s", counts)
	}

	switch {
	case t != nil:
		p.setCondition(pgv1.ConditionReady, metav1.ConditionFalse, t.reason, "%s", t.message)
	case !primaryOK:
		msg := "no primary"
		if pa != nil {
			msg = pa.Message
		}
		p.setCondition(pgv1.ConditionReady, metav1.ConditionFalse, pgv1.ReasonPrimaryNotReady, "%s", msg)
	case st.ReadyReplicas < want:
		p.setCondition(pgv1.ConditionReady, metav1.ConditionFalse, pgv1.ReasonInstancesNotReady, "%s", counts)
	default:
		p.setCondition(pgv1.ConditionReady, metav1.ConditionTrue, pgv1.ReasonAllReady, "%s; primary %s", counts, st.CurrentPrimary)
	}
	st.Phase = phase(st, t, switching, pa)
}

// phase is the one-word summary for the Phase column.
func phase(st *pgv1.PostgresClusterStatus, t *trouble, switching bool, pa *metav1.Condition) string {
	switch {
	case st.CurrentPrimary == "":
		return pgv1.PhaseBootstrapping
	case switching && pa.Reason == pgv1.ReasonFailingOver:
		return pgv1.PhaseFailingOver
	case switching:
		return pgv1.PhaseSwitchingOver
	case t != nil || !meta.IsStatusConditionTrue(st.Conditions, pgv1.ConditionPrimaryAvailable):
		return pgv1.PhaseDegraded
	case meta.IsStatusConditionTrue(st.Conditions, pgv1.ConditionReady):
		return pgv1.PhaseHealthy
	default:
		return pgv1.PhaseScaling
	}
}

// setError reports a failed pass: Ready=False with reason ReconcileError and
// the error's text (a Forbidden error names the missing permission).
func (p *pass) setError(err error) {
	p.setCondition(pgv1.ConditionReady, metav1.ConditionFalse, pgv1.ReasonReconcileError, "%v", err)
	p.pgc.Status.Phase = pgv1.PhaseError
	p.pgc.Status.InstanceControl = p.r.Instance.Mode()
}

// writeStatus stores the status if it differs from what was last stored.
// The update carries the resourceVersion the pass read, so it fails with a
// conflict if the cluster changed meanwhile.
func (p *pass) writeStatus(ctx context.Context) error {
	if pa := meta.FindStatusCondition(p.pgc.Status.Conditions, pgv1.ConditionPrimaryAvailable); pa != nil && p.pgc.Status.CurrentPrimary != p.pgc.Status.TargetPrimary {
		// A change of primary is under way: say so before setStatus runs.
		switch pa.Reason {
		case pgv1.ReasonFailingOver:
			p.pgc.Status.Phase = pgv1.PhaseFailingOver
		case pgv1.ReasonSwitchingOver:
			p.pgc.Status.Phase = pgv1.PhaseSwitchingOver
		case pgv1.ReasonBootstrapping:
			p.pgc.Status.Phase = pgv1.PhaseBootstrapping
		}
	}
	if equality.Semantic.DeepEqual(p.written, p.pgc.Status) {
		return nil
	}
	if err := p.r.Client.Status().Update(ctx, p.pgc); err != nil {
		return fmt.Errorf("update status of PostgresCluster %s: %w", p.pgc.Name, err)
	}
	p.written = *p.pgc.Status.DeepCopy()
	p.done("wrote status (phase %s)", p.pgc.Status.Phase)
	return nil
}
