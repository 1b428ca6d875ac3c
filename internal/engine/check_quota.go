package engine

import (
	"context"
	"fmt"
	"math"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
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
// applies to the workload's pods (no scope that leaves them out), limits
// every resource it must, and no limit is beyond MaxFactor times what the
// workload's instances need. The workload is the PostgresCluster, or with
// statefulSet the StatefulSet a third-party operator made.
func (e *Engine) quotaEnforced(ctx context.Context, p *lab.QuotaEnforced) (bool, string) {
	ns := namespace(p.Target)
	q, err := e.cs.CoreV1().ResourceQuotas(ns).Get(ctx, p.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return false, fmt.Sprintf("ResourceQuota %s/%s was deleted; it must stay (raise it or lower the requests instead)", ns, p.Name)
	case err != nil:
		return false, fmt.Sprintf("cannot read ResourceQuota %s/%s: %v", ns, p.Name, err)
	}
	if p.StatefulSet != "" {
		sts, err := e.cs.AppsV1().StatefulSets(ns).Get(ctx, p.StatefulSet, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Sprintf("cannot read StatefulSet %s/%s: %v", ns, p.StatefulSet, err)
		}
		return quotaJudgement(q, statefulSetWorkload(sts), p)
	}
	pgc, err := e.cluster(ctx, p.Target)
	if err != nil {
		return false, missing(p.Target, err)
	}
	return quotaJudgement(q, clusterWorkload(pgc), p)
}

// quotaJudgement is quotaEnforced on objects already read.
func quotaJudgement(q *corev1.ResourceQuota, w workload, p *lab.QuotaEnforced) (bool, string) {
	name := q.Namespace + "/" + q.Name
	if len(q.Spec.Hard) == 0 {
		return false, fmt.Sprintf("ResourceQuota %s was emptied: it limits nothing (it limited %s)", name, strings.Join(p.Resources, ", "))
	}
	if len(q.Spec.Scopes) > 0 || q.Spec.ScopeSelector != nil {
		return false, fmt.Sprintf("ResourceQuota %s was given scopes, so it no longer applies to %s's pods; it must limit them as before", name, w.name)
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
		need := w.need(r)
		bound := scale(need, p.MaxFactor)
		if hard.Cmp(bound) > 0 {
			return false, fmt.Sprintf("ResourceQuota %s allows %s of %s, more than %g× what %s's %d instances need (%s): a limit that high limits nothing", name, hard.String(), r, p.MaxFactor, w.name, w.instances, need.String())
		}
	}
	return true, fmt.Sprintf("ResourceQuota %s still limits %s, within %g× what %s needs", name, strings.Join(p.Resources, ", "), p.MaxFactor, w.name)
}

// workload is what a quota must leave room for: instances alike, each a
// pod with its resources and its claims.
type workload struct {
	name      string
	instances int64
	// pod is one instance's resources: Kubernetes takes a limit as the
	// request when only a limit is set.
	pod corev1.ResourceRequirements
	// claims is how many claims one instance has; storage, how much they
	// ask for in all.
	claims  int64
	storage resource.Quantity
}

// clusterWorkload is a PostgresCluster's spec.replicas instances.
func clusterWorkload(pgc *pgv1.PostgresCluster) workload {
	size := resource.MustParse("1Gi") // the CRD's default size
	if s := pgc.Spec.Storage.Size; s != nil {
		size = *s
	}
	return workload{name: pgc.Name, instances: int64(pgc.Spec.Replicas), pod: pgc.Spec.Resources, claims: 1, storage: size}
}

// statefulSetWorkload is a StatefulSet's spec.replicas pods: each one's
// requests and limits summed over its containers (an init container's,
// when larger, as the scheduler and the quota count them), and its
// volume claim templates.
func statefulSetWorkload(sts *appsv1.StatefulSet) workload {
	w := workload{name: sts.Name, instances: 1, claims: int64(len(sts.Spec.VolumeClaimTemplates))}
	if sts.Spec.Replicas != nil {
		w.instances = int64(*sts.Spec.Replicas)
	}
	spec := sts.Spec.Template.Spec
	w.pod = corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for _, c := range spec.Containers {
		for name := range c.Resources.Limits {
			addTo(w.pod.Limits, name, c.Resources.Limits[name])
		}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q := request(c.Resources, name); !q.IsZero() {
				addTo(w.pod.Requests, name, q)
			}
		}
	}
	for _, c := range spec.InitContainers {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, cur := request(c.Resources, name), w.pod.Requests[name]; q.Cmp(cur) > 0 {
				w.pod.Requests[name] = q
			}
			if q, cur := c.Resources.Limits[name], w.pod.Limits[name]; q.Cmp(cur) > 0 {
				w.pod.Limits[name] = q
			}
		}
	}
	for _, t := range sts.Spec.VolumeClaimTemplates {
		w.storage.Add(t.Spec.Resources.Requests[corev1.ResourceStorage])
	}
	return w
}

func addTo(l corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	sum := l[name]
	sum.Add(q)
	l[name] = sum
}

// need is how much of a quota resource the workload's instances need:
// each one's request (or limit), pod, claims or storage.
func (w workload) need(r string) resource.Quantity {
	n := w.instances
	each := resource.Quantity{}
	switch r {
	case "pods":
		return *resource.NewQuantity(n, resource.DecimalSI)
	case "persistentvolumeclaims":
		return *resource.NewQuantity(n*w.claims, resource.DecimalSI)
	case "requests.storage":
		each = w.storage
	case "cpu", "requests.cpu":
		each = request(w.pod, corev1.ResourceCPU)
	case "memory", "requests.memory":
		each = request(w.pod, corev1.ResourceMemory)
	case "limits.cpu":
		each = w.pod.Limits[corev1.ResourceCPU]
	case "limits.memory":
		each = w.pod.Limits[corev1.ResourceMemory]
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
