package engine

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/lab"
)

func quota(hard map[string]string) *corev1.ResourceQuota {
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "pg-quota", Namespace: "default"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{}}}
	for k, v := range hard {
		q.Spec.Hard[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return q
}

func pgCluster(replicas int32, cpu, memory string) *pgv1.PostgresCluster {
	return &pgv1.PostgresCluster{ObjectMeta: metav1.ObjectMeta{Name: "prod-db"}, Spec: pgv1.PostgresClusterSpec{
		Replicas: replicas,
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}},
	}}
}

// The quota lab's repairs and shortcuts, judged on the objects alone.
func TestQuotaJudgement(t *testing.T) {
	t.Parallel()
	p := &lab.QuotaEnforced{Name: "pg-quota", Resources: []string{"requests.cpu", "requests.memory"}, MaxFactor: 2}
	scoped := quota(map[string]string{"requests.cpu": "2", "requests.memory": "1Gi"})
	scoped.Spec.Scopes = []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeTerminating}
	tests := []struct {
		name string
		q    *corev1.ResourceQuota
		pgc  *pgv1.PostgresCluster
		pass bool
		says string
	}{
		{"raised to fit", quota(map[string]string{"requests.cpu": "2", "requests.memory": "1Gi"}), pgCluster(3, "500m", "256Mi"), true, "still limits"},
		{"requests lowered", quota(map[string]string{"requests.cpu": "1200m", "requests.memory": "1Gi"}), pgCluster(3, "400m", "256Mi"), true, "still limits"},
		{"exactly twice the need", quota(map[string]string{"requests.cpu": "3", "requests.memory": "1536Mi"}), pgCluster(3, "500m", "256Mi"), true, "still limits"},
		{"emptied", quota(nil), pgCluster(3, "500m", "256Mi"), false, "emptied"},
		{"scoped away", scoped, pgCluster(3, "500m", "256Mi"), false, "scopes"},
		{"a resource dropped", quota(map[string]string{"requests.cpu": "2"}), pgCluster(3, "500m", "256Mi"), false, "no longer limits requests.memory"},
		{"raised beyond the need", quota(map[string]string{"requests.cpu": "64", "requests.memory": "1Gi"}), pgCluster(3, "500m", "256Mi"), false, "allows 64 of requests.cpu, more than 2× what prod-db's 3 instances need (1500m)"},
		{"just beyond twice the need", quota(map[string]string{"requests.cpu": "3001m", "requests.memory": "1Gi"}), pgCluster(3, "500m", "256Mi"), false, "more than 2×"},
		{"memory beyond the need", quota(map[string]string{"requests.cpu": "2", "requests.memory": "64Gi"}), pgCluster(3, "500m", "256Mi"), false, "requests.memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ok, why := quotaJudgement(tt.q, clusterWorkload(tt.pgc), p)
			if ok != tt.pass || !strings.Contains(why, tt.says) {
				t.Errorf("got %v %q, want %v and a reason containing %q", ok, why, tt.pass, tt.says)
			}
		})
	}
}

func TestClusterNeed(t *testing.T) {
	t.Parallel()
	pgc := pgCluster(3, "500m", "256Mi")
	size := resource.MustParse("2Gi")
	pgc.Spec.Storage.Size = &size
	pgc.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
	tests := []struct{ res, want string }{
		{"requests.cpu", "1500m"}, {"cpu", "1500m"}, {"requests.memory", "768Mi"},
		{"limits.memory", "3Gi"}, {"pods", "3"}, {"persistentvolumeclaims", "3"}, {"requests.storage", "6Gi"},
	}
	for _, tt := range tests {
		got := clusterWorkload(pgc).need(tt.res)
		if want := resource.MustParse(tt.want); got.Cmp(want) != 0 {
			t.Errorf("need of %s: got %s, want %s", tt.res, got.String(), tt.want)
		}
	}
}

// A third-party operator's StatefulSet: its pods' requests summed over the
// containers, an init container's when larger, its claim templates.
func TestStatefulSetNeed(t *testing.T) {
	t.Parallel()
	res := func(cpu, memory string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
		}}
	}
	limitOnly := corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("50Mi")}}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "analytics-db"}, Spec: appsv1.StatefulSetSpec{
		Replicas: ptr.To[int32](2),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", Resources: res("1", "10Mi")}},
			Containers:     []corev1.Container{{Name: "postgres", Resources: res("100m", "100Mi")}, {Name: "sidecar", Resources: limitOnly}},
		}},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{Spec: corev1.PersistentVolumeClaimSpec{
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		}}},
	}}
	w := statefulSetWorkload(sts)
	tests := []struct{ res, want string }{
		{"requests.cpu", "2"}, {"requests.memory", "300Mi"}, {"limits.memory", "100Mi"},
		{"pods", "2"}, {"persistentvolumeclaims", "2"}, {"requests.storage", "2Gi"},
	}
	for _, tt := range tests {
		got := w.need(tt.res)
		if want := resource.MustParse(tt.want); got.Cmp(want) != 0 {
			t.Errorf("need of %s: got %s, want %s", tt.res, got.String(), tt.want)
		}
	}
	p := &lab.QuotaEnforced{Name: "pg-quota", Resources: []string{"requests.memory"}, MaxFactor: 2}
	if ok, why := quotaJudgement(quota(map[string]string{"requests.memory": "1Gi"}), w, p); ok || !strings.Contains(why, "analytics-db's 2 instances need (300Mi)") {
		t.Errorf("a quota above twice the need: got %v %q, want it refused, naming the StatefulSet's need", ok, why)
	}
}
