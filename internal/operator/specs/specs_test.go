package specs

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pgv1 "oplab.dev/oplab/api/v1"
)

func cluster(mut ...func(*pgv1.PostgresCluster)) *pgv1.PostgresCluster {
	pgc := &pgv1.PostgresCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "prod-db", Namespace: "team", UID: "uid-1"},
		Spec: pgv1.PostgresClusterSpec{
			Replicas: 3,
			Version:  "15",
			Backup:   &pgv1.BackupSpec{Schedule: "0 2 * * *", Retention: "7d"},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceMemory: resource.MustParse("2Gi"), corev1.ResourceCPU: resource.MustParse("1"),
			}},
		},
	}
	for _, m := range mut {
		m(pgc)
	}
	return pgc
}

// TestOwnedObjects checks what every owned object shares: name, namespace,
// labels and a controller owner reference to the cluster.
func TestOwnedObjects(t *testing.T) {
	t.Parallel()
	pgc := cluster()
	tests := []struct {
		obj  client.Object
		name string
	}{
		{StatefulSet(pgc, 3), "prod-db"},
		{Service(pgc, pgv1.RolePrimary), "prod-db-rw"},
		{Service(pgc, pgv1.RoleReplica), "prod-db-ro"},
		{HeadlessService(pgc), "prod-db-pods"},
		{Secret(pgc, "pw"), "prod-db-credentials"},
		{ConfigMap(pgc), "prod-db-config"},
		{CronJob(pgc), "prod-db-backup"},
		{PodDisruptionBudget(pgc), "prod-db"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+typeName(tt.obj), func(t *testing.T) {
			t.Parallel()
			if got := tt.obj.GetName(); got != tt.name {
				t.Errorf("name: got %q, want %q", got, tt.name)
			}
			if got := tt.obj.GetNamespace(); got != "team" {
				t.Errorf("namespace: got %q, want team", got)
			}
			if got := tt.obj.GetLabels()[pgv1.LabelCluster]; got != "prod-db" {
				t.Errorf("cluster label: got %q, want prod-db", got)
			}
			refs := tt.obj.GetOwnerReferences()
			if len(refs) != 1 || refs[0].UID != "uid-1" || refs[0].Kind != "PostgresCluster" || !ptr.Deref(refs[0].Controller, false) {
				t.Errorf("owner references: got %+v, want one controller reference to PostgresCluster uid-1", refs)
			}
		})
	}
}

func typeName(o client.Object) string {
	return reflect.TypeOf(o).Elem().Name()
}

func TestStatefulSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		pgc       *pgv1.PostgresCluster
		replicas  int32
		wantImage string
		wantSize  string
		wantClass *string
	}{
		{"course example", cluster(), 3, "postgres:15", "1Gi", nil},
		{"storage set", cluster(func(p *pgv1.PostgresCluster) {
			p.Spec.Version = "16"
			p.Spec.Storage = pgv1.StorageSpec{Size: ptr.To(resource.MustParse("5Gi")), StorageClassName: ptr.To("fast")}
		}), 4, "postgres:16", "5Gi", ptr.To("fast")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sts := StatefulSet(tt.pgc, tt.replicas)
			if got := *sts.Spec.Replicas; got != tt.replicas {
				t.Errorf("replicas: got %d, want %d", got, tt.replicas)
			}
			c := sts.Spec.Template.Spec.Containers[0]
			if c.Image != tt.wantImage {
				t.Errorf("image: got %q, want %q", c.Image, tt.wantImage)
			}
			if got, want := c.Resources.Requests.Memory().String(), "2Gi"; got != want {
				t.Errorf("memory request: got %s, want %s", got, want)
			}
			sel, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
			if err != nil {
				t.Fatal(err)
			}
			if !sel.Matches(labels.Set(sts.Spec.Template.Labels)) {
				t.Errorf("selector %s does not match template labels %v", sel, sts.Spec.Template.Labels)
			}
			if _, ok := sts.Spec.Template.Labels[pgv1.LabelRole]; ok {
				t.Errorf("template has a role label: the operator, not the StatefulSet, decides roles")
			}
			vct := sts.Spec.VolumeClaimTemplates[0]
			if got := vct.Spec.Resources.Requests.Storage().String(); got != tt.wantSize {
				t.Errorf("volume size: got %s, want %s", got, tt.wantSize)
			}
			if !ptr.Equal(vct.Spec.StorageClassName, tt.wantClass) {
				t.Errorf("storage class: got %v, want %v", ptr.Deref(vct.Spec.StorageClassName, "<nil>"), ptr.Deref(tt.wantClass, "<nil>"))
			}
			if sts.Spec.ServiceName != "prod-db-pods" {
				t.Errorf("serviceName: got %q, want prod-db-pods", sts.Spec.ServiceName)
			}
		})
	}
}

func TestSpecHash(t *testing.T) {
	t.Parallel()
	hash := func(o client.Object) string { return o.GetAnnotations()[AnnotationSpecHash] }
	base := cluster()
	tests := []struct {
		name     string
		a, b     client.Object
		wantSame bool
	}{
		{"same spec", StatefulSet(base, 3), StatefulSet(cluster(), 3), true},
		{"replicas are not hashed", StatefulSet(base, 3), StatefulSet(base, 5), true},
		{"version changes the hash", StatefulSet(base, 3), StatefulSet(cluster(func(p *pgv1.PostgresCluster) { p.Spec.Version = "16" }), 3), false},
		{"schedule changes the cronjob", CronJob(base), CronJob(cluster(func(p *pgv1.PostgresCluster) { p.Spec.Backup.Schedule = "0 3 * * *" })), false},
		{"replicas change the config", ConfigMap(base), ConfigMap(cluster(func(p *pgv1.PostgresCluster) { p.Spec.Replicas = 5 })), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if hash(tt.a) == "" {
				t.Fatalf("no %s annotation", AnnotationSpecHash)
			}
			if same := hash(tt.a) == hash(tt.b); same != tt.wantSame {
				t.Errorf("hashes %s and %s: same=%v, want %v", hash(tt.a), hash(tt.b), same, tt.wantSame)
			}
		})
	}
}

func TestServiceSelectors(t *testing.T) {
	t.Parallel()
	pgc := cluster()
	pod := func(role string) labels.Set {
		l := labels.Set(StatefulSet(pgc, 1).Spec.Template.Labels)
		if role != "" {
			l[pgv1.LabelRole] = role
		}
		return l
	}
	tests := []struct {
		role, svc string
		want      bool
	}{
		{pgv1.RolePrimary, "rw", true},
		{pgv1.RoleReplica, "rw", false},
		{pgv1.RoleUnhealthy, "rw", false},
		{"", "rw", false},
		{pgv1.RoleReplica, "ro", true},
		{pgv1.RolePrimary, "ro", false},
		{pgv1.RoleUnhealthy, "ro", false},
	}
	for _, tt := range tests {
		t.Run(tt.svc+"/"+tt.role, func(t *testing.T) {
			t.Parallel()
			role := pgv1.RolePrimary
			if tt.svc == "ro" {
				role = pgv1.RoleReplica
			}
			svc := Service(pgc, role)
			if got := labels.SelectorFromSet(svc.Spec.Selector).Matches(pod(tt.role)); got != tt.want {
				t.Errorf("%s selects a pod with role %q: got %v, want %v", svc.Name, tt.role, got, tt.want)
			}
		})
	}
}

func TestCronJob(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		backup    *pgv1.BackupSpec
		wantNil   bool
		wantDays  string
		wantSched string
	}{
		{"no backup", nil, true, "", ""},
		{"days", &pgv1.BackupSpec{Schedule: "0 2 * * *", Retention: "7d"}, false, "7", "0 2 * * *"},
		{"weeks", &pgv1.BackupSpec{Schedule: "30 1 * * 0", Retention: "4w"}, false, "28", "30 1 * * 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cj := CronJob(cluster(func(p *pgv1.PostgresCluster) { p.Spec.Backup = tt.backup }))
			if (cj == nil) != tt.wantNil {
				t.Fatalf("got CronJob %v, want nil=%v", cj != nil, tt.wantNil)
			}
			if cj == nil {
				return
			}
			if cj.Spec.Schedule != tt.wantSched {
				t.Errorf("schedule: got %q, want %q", cj.Spec.Schedule, tt.wantSched)
			}
			var days string
			for _, e := range cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env {
				if e.Name == "RETENTION_DAYS" {
					days = e.Value
				}
			}
			if days != tt.wantDays {
				t.Errorf("RETENTION_DAYS: got %q, want %q", days, tt.wantDays)
			}
			sts := StatefulSet(cluster(), 1)
			sel, _ := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
			if sel.Matches(labels.Set(cj.Spec.JobTemplate.Spec.Template.Labels)) {
				t.Errorf("backup pods match the StatefulSet's selector")
			}
		})
	}
}

func TestSecret(t *testing.T) {
	t.Parallel()
	a, b := NewPassword(), NewPassword()
	if len(a) != 24 || a == b {
		t.Fatalf("passwords %q, %q: want two different 24-character passwords", a, b)
	}
	s := Secret(cluster(), a)
	if s.StringData[SecretKeyPassword] != a || s.StringData[SecretKeyUsername] != "postgres" {
		t.Errorf("secret data: got %v, want username postgres and the given password", s.StringData)
	}
	sts := StatefulSet(cluster(), 1)
	var refs int
	for _, e := range sts.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == s.Name {
			refs++
		}
	}
	if refs != 2 {
		t.Errorf("container env refers to the secret %d times, want 2 (user and password)", refs)
	}
}

func TestConfigMap(t *testing.T) {
	t.Parallel()
	cm := ConfigMap(cluster())
	for _, want := range []string{"wal_level = replica", "hot_standby = on", "max_wal_senders = 7"} {
		if !strings.Contains(cm.Data["postgresql.conf"], want) {
			t.Errorf("postgresql.conf lacks %q", want)
		}
	}
	if !strings.Contains(cm.Data["pg_hba.conf"], "replication") {
		t.Errorf("pg_hba.conf does not allow replication connections")
	}
	if !strings.Contains(cm.Data[BootstrapScript], "pg_basebackup") {
		t.Errorf("%s does not clone replicas", BootstrapScript)
	}
	init := StatefulSet(cluster(), 1).Spec.Template.Spec.InitContainers[0]
	if !strings.HasSuffix(init.Command[len(init.Command)-1], BootstrapScript) {
		t.Errorf("init container runs %v, want the ConfigMap's %s", init.Command, BootstrapScript)
	}
	var host string
	for _, e := range init.Env {
		if e.Name == "PRIMARY_HOST" {
			host = e.Value
		}
	}
	if host != "prod-db-rw" {
		t.Errorf("init container PRIMARY_HOST: got %q, want prod-db-rw", host)
	}
}
