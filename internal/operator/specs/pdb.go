package specs

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	pgv1 "oplab.dev/oplab/api/v1"
)

// PodDisruptionBudget builds the budget that lets a node drain evict one
// instance at a time.
func PodDisruptionBudget(pgc *pgv1.PostgresCluster) *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: objectMeta(pgc, pgc.Name),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: SelectorLabels(pgc)},
		},
	}
	withHash(&pdb.ObjectMeta, pdb.Spec)
	return pdb
}
