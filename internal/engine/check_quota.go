package engine

import (
	"context"
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/lab"
)

func (e *Engine) quotaPresent(ctx context.Context, p *lab.QuotaPresent) (bool, string) {
	_, err := e.cs.CoreV1().ResourceQuotas(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Sprintf("ResourceQuota %s/%s was deleted; it must stay (raise it or lower the requests instead)", p.Namespace, p.Name)
	case err != nil:
		return false, fmt.Sprintf("cannot read ResourceQuota %s/%s: %v", p.Namespace, p.Name, err)
	}
	return true, fmt.Sprintf("ResourceQuota %s/%s is still there", p.Namespace, p.Name)
}

// quotaEnforced judges whether the quota still does its job: it exists,
// applies to the cluster's pods (no scope that leaves them out), limits
// every resource it must, and no limit is beyond MaxFactor times what the
// PostgresCluster's instances need.
func (e *Engine) quotaEnforced(ctx context.Context, p *lab.QuotaEnforced) (bool, string) {
	ns := namespace(p.Target)
	q, err := e.cs.CoreV1().ResourceQuotas(ns).Get(ctx, p.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Sprintf("ResourceQuota %s/%s was deleted; it must stay (raise it or lower the requests instead)", ns, p.Name)
	case err != nil:
		return false, fmt.Sprintf("cannot read ResourceQuota %s/%s: %v", ns, p.Name, err)
	}
	pgc, err := e.cluster(ctx, p.Target)
	if err != nil {
		return false, missing(p.Target, err)
	}
	return quotaJudgement(q, pgc, p)
}

// quotaJudgement is quotaEnforced on objects already read.
func quotaJudgement(q *corev1.ResourceQuota, pgc *pgv1.PostgresCluster, p *lab.QuotaEnforced) (bool, string) {
	name := q.Namespace + "/" + q.Name
	if len(q.Spec.Hard) == 0 {
		return false, fmt.Sprintf("ResourceQuota %s was emptied: it limits nothing (it limited %s)", name, strings.Join(p.Resources, ", "))
	}
	if len(q.Spec.Scopes) > 0 || q.Spec.ScopeSelector != nil {
		return false, fmt.Sprintf("ResourceQuota %s was given scopes, so it no longer applies to %s's pods; it must limit them as before", name, pgc.Name)
	}
	var dropped []string
	for _, r := range p.Resources {
		if _, ok := q.Spec.Hard[corev1.ResourceName(r)]; !ok {
			dropped = append(dropped, r)
		}
	}
	if len(dropped) > 0 {
		return false, fmt.Sprintf("ResourceQuota %s no longer limits %s; it must keep limiting it", name, strings.Join(dropped, ", "))
	}
	for _, r := range p.Resources {
		hard := q.Spec.Hard[corev1.ResourceName(r)]
		need := clusterNeed(pgc, r)
		bound := scale(need, p.MaxFactor)
		if hard.Cmp(bound) > 0 {
			return false, fmt.Sprintf("ResourceQuota %s allows %s of %s, more than %g× what %s's %d instances need (%s): a limit that high limits nothing", name, hard.String(), r, p.MaxFactor, pgc.Name, pgc.Spec.Replicas, need.String())
		}
	}
	return true, fmt.Sprintf("ResourceQuota %s still limits %s, within %g× what %s needs", name, strings.Join(p.Resources, ", "), p.MaxFactor, pgc.Name)
}

// clusterNeed is how much of a quota resource the cluster's spec.replicas
// instances need: each one's request (or limit), pod, claim or volume.
func clusterNeed(pgc *pgv1.PostgresCluster, r string) resource.Quantity {
	n := int64(pgc.Spec.Replicas)
	each := resource.Quantity{}
	res := pgc.Spec.Resources
	switch r {
	case "pods", "persistentvolumeclaims":
		return *resource.NewQuantity(n, resource.DecimalSI)
	case "requests.storage":
		each = resource.MustParse("1Gi") // the CRD's default size
		if s := pgc.Spec.Storage.Size; s != nil {
			each = *s
		}
	case "cpu", "requests.cpu":
		each = request(res, corev1.ResourceCPU)
	case "memory", "requests.memory":
		each = request(res, corev1.ResourceMemory)
	case "limits.cpu":
		each = res.Limits[corev1.ResourceCPU]
	case "limits.memory":
		each = res.Limits[corev1.ResourceMemory]
	}
	total := resource.NewMilliQuantity(each.MilliValue()*n, each.Format)
	if each.Format == resource.BinarySI || each.MilliValue()*n%1000 == 0 {
		total = resource.NewQuantity(each.Value()*n, each.Format)
	}
	return *total
}

// request is an instance's request of name; Kubernetes takes the limit
// when only a limit is set.
func request(res corev1.ResourceRequirements, name corev1.ResourceName) resource.Quantity {
	if q, ok := res.Requests[name]; ok {
		return q
	}
	return res.Limits[name]
}

// scale returns q × f.
func scale(q resource.Quantity, f float64) resource.Quantity {
	return *resource.NewMilliQuantity(int64(math.Round(float64(q.MilliValue())*f)), q.Format)
}
