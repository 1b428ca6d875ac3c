package controller

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/operator/instance"
)

func TestSetStatus(t *testing.T) {
	t.Parallel()
	notReady := replica("db-2", 2, 5)
	notReady.ready = false
	three := members{primary("db-0", 0), replica("db-1", 1, 9), replica("db-2", 2, 8)}
	tests := []struct {
		name        string
		cur, tgt    string
		primary     metav1.ConditionStatus
		primaryWhy  string
		ms          members
		trouble     *trouble
		wantReady   string // reason
		wantProg    string // reason
		wantPhase   string
		wantReadyOK bool
	}{
		{"healthy", "db-0", "db-0", metav1.ConditionTrue, pgv1.ReasonPrimaryReady, three, nil,
			pgv1.ReasonAllReady, pgv1.ReasonUpToDate, pgv1.PhaseHealthy, true},
		{"a replica not ready", "db-0", "db-0", metav1.ConditionTrue, pgv1.ReasonPrimaryReady, members{three[0], three[1], notReady}, nil,
			pgv1.ReasonInstancesNotReady, pgv1.ReasonScaling, pgv1.PhaseScaling, false},
		{"failing over", "db-0", "db-1", metav1.ConditionFalse, pgv1.ReasonFailingOver, three[1:], nil,
			pgv1.ReasonPrimaryNotReady, pgv1.ReasonFailingOver, pgv1.PhaseFailingOver, false},
		{"quota", "db-0", "db-0", metav1.ConditionTrue, pgv1.ReasonPrimaryReady, three[:1], &trouble{pgv1.ReasonQuotaExceeded, "exceeded quota"},
			pgv1.ReasonQuotaExceeded, pgv1.ReasonQuotaExceeded, pgv1.PhaseDegraded, false},
		{"bootstrapping", "", "", metav1.ConditionFalse, pgv1.ReasonBootstrapping, nil, nil,
			pgv1.ReasonPrimaryNotReady, pgv1.ReasonBootstrapping, pgv1.PhaseBootstrapping, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pgc := &pgv1.PostgresCluster{ObjectMeta: metav1.ObjectMeta{Name: "db", Generation: 4}}
			pgc.Spec.Replicas = 3
			pgc.Status.CurrentPrimary, pgc.Status.TargetPrimary = tt.cur, tt.tgt
			p := &pass{r: &Reconciler{Instance: instance.NewSimulated(nil)}, pgc: pgc, now: time.Now()}
			p.setCondition(pgv1.ConditionPrimaryAvailable, tt.primary, tt.primaryWhy, "x")
			sts := &appsv1.StatefulSet{Status: appsv1.StatefulSetStatus{ReadyReplicas: tt.ms.countReady()}}
			p.setStatus(tt.ms, sts, tt.trouble)
			st := pgc.Status
			ready := meta.FindStatusCondition(st.Conditions, pgv1.ConditionReady)
			prog := meta.FindStatusCondition(st.Conditions, pgv1.ConditionProgressing)
			if ready.Reason != tt.wantReady || (ready.Status == metav1.ConditionTrue) != tt.wantReadyOK {
				t.Errorf("Ready: got %s/%s, want reason %s, true=%v", ready.Status, ready.Reason, tt.wantReady, tt.wantReadyOK)
			}
			if prog.Reason != tt.wantProg {
				t.Errorf("Progressing reason: got %s, want %s", prog.Reason, tt.wantProg)
			}
			if st.Phase != tt.wantPhase {
				t.Errorf("phase: got %s, want %s", st.Phase, tt.wantPhase)
			}
			if st.ObservedGeneration != 4 || st.InstanceControl != "simulated" || st.Selector == "" {
				t.Errorf("status: got observedGeneration %d, instanceControl %q, selector %q", st.ObservedGeneration, st.InstanceControl, st.Selector)
			}
		})
	}
}

func TestSetError(t *testing.T) {
	t.Parallel()
	pgc := &pgv1.PostgresCluster{}
	p := &pass{r: &Reconciler{Instance: instance.NewSimulated(nil)}, pgc: pgc, now: time.Now()}
	p.setError(errForbidden)
	c := meta.FindStatusCondition(pgc.Status.Conditions, pgv1.ConditionReady)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != pgv1.ReasonReconcileError || c.Message != errForbidden.Error() {
		t.Fatalf("Ready: got %+v, want False/ReconcileError with the error's text", c)
	}
	if pgc.Status.Phase != pgv1.PhaseError {
		t.Errorf("phase: got %s, want Error", pgc.Status.Phase)
	}
}

var errForbidden = errorString(`update StatefulSet db: statefulsets.apps "db" is forbidden: User "system:serviceaccount:x:pg-operator" cannot update resource "statefulsets"`)

type errorString string

func (e errorString) Error() string { return string(e) }
