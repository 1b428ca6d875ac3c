package specs

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	pgv1 "oplab.dev/oplab/api/v1"
)

// DefaultStorageSize is each instance's volume size when spec.storage.size
// is empty.
var DefaultStorageSize = resource.MustParse("1Gi")

const (
	// DataVolume is the name of the volume claim template; the claims are
	// data-<name>-<ordinal>.
	DataVolume  = "data"
	configMount = "/etc/postgresql"
	dataMount   = "/var/lib/postgresql/data"
	// PostgresContainer names the container of an instance pod that runs
	// the server.
	PostgresContainer = "postgres"
	// PostgresPort is the port of every instance and Service.
	PostgresPort = 5432
	// postgresUID is the postgres user of the official image.
	postgresUID = 999
)

// StatefulSet builds the StatefulSet of a cluster with replicas pods. The
// reconciler passes spec.replicas, or more while a scale-down waits for a
// switchover. Pods get no role label here: the operator adds it once it
// knows the instance's role.
func StatefulSet(pgc *pgv1.PostgresCluster, replicas int32) *appsv1.StatefulSet {
	sts := &appsv1.StatefulSet{
		ObjectMeta: objectMeta(pgc, pgc.Name),
		Spec: appsv1.StatefulSetSpec{
			ServiceName:         HeadlessServiceName(pgc),
			Selector:            &metav1.LabelSelector{MatchLabels: SelectorLabels(pgc)},
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(pgc)},
				Spec:       podSpec(pgc),
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{volumeClaim(pgc)},
		},
	}
	withHash(&sts.ObjectMeta, sts.Spec) // hashed without replicas: scaling is compared on its own
	sts.Spec.Replicas = ptr.To(replicas)
	return sts
}

func podSpec(pgc *pgv1.PostgresCluster) corev1.PodSpec {
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](30),
		SecurityContext:               &corev1.PodSecurityContext{FSGroup: ptr.To[int64](postgresUID)},
		InitContainers: []corev1.Container{{
			Name:    "bootstrap",
			Image:   "postgres:" + pgc.Spec.Version,
			Command: []string{"sh", configMount + "/" + BootstrapScript},
			// The same requests and limits as the server: a namespace with a
			// ResourceQuota on requests.* rejects a pod whose init container
			// names none, and the pod's effective request is the larger of
			// the two, so this adds nothing to it.
			Resources:       *pgc.Spec.Resources.DeepCopy(),
			SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](postgresUID), RunAsGroup: ptr.To[int64](postgresUID)},
			Env: []corev1.EnvVar{
				{Name: "PGDATA", Value: dataMount + "/pgdata"},
				{Name: "PRIMARY_HOST", Value: ServiceName(pgc, pgv1.RolePrimary)},
				{Name: "CLUSTER_UID", Value: string(pgc.UID)},
				{Name: "PGUSER", ValueFrom: secretKey(pgc, SecretKeyUsername)},
				{Name: "PGPASSWORD", ValueFrom: secretKey(pgc, SecretKeyPassword)},
			},
			VolumeMounts: []corev1.VolumeMount{
				{Name: DataVolume, MountPath: dataMount},
				{Name: "config", MountPath: configMount},
			},
		}},
		Containers: []corev1.Container{{
			Name:      PostgresContainer,
			Image:     "postgres:" + pgc.Spec.Version,
			Args:      []string{"-c", "config_file=" + configMount + "/postgresql.conf", "-c", "hba_file=" + configMount + "/pg_hba.conf"},
			Ports:     []corev1.ContainerPort{{Name: "postgres", ContainerPort: PostgresPort}},
			Resources: *pgc.Spec.Resources.DeepCopy(),
			Env: []corev1.EnvVar{
				{Name: "PGDATA", Value: dataMount + "/pgdata"},
				{Name: "POSTGRES_USER", ValueFrom: secretKey(pgc, SecretKeyUsername)},
				{Name: "POSTGRES_PASSWORD", ValueFrom: secretKey(pgc, SecretKeyPassword)},
			},
			VolumeMounts: []corev1.VolumeMount{
				{Name: DataVolume, MountPath: dataMount},
				{Name: "config", MountPath: configMount},
			},
			// Timeouts of 5 s, not the default 1 s: on a busy node (a kind
			// node of a 2-core machine at load average 40-60) pg_isready
			// took longer than a second and every instance went not-ready,
			// failing over and back for nothing.
			ReadinessProbe: &corev1.Probe{
				ProbeHandler:   corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"pg_isready", "-U", "postgres"}}},
				PeriodSeconds:  5,
				TimeoutSeconds: 5,
			},
			LivenessProbe: &corev1.Probe{
				ProbeHandler:     corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(PostgresPort)}},
				PeriodSeconds:    10,
				TimeoutSeconds:   5,
				FailureThreshold: 6,
			},
		}},
		Volumes: []corev1.Volume{{
			Name: "config",
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName(pgc)},
			}},
		}},
	}
}

func secretKey(pgc *pgv1.PostgresCluster, key string) *corev1.EnvVarSource {
	return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: SecretName(pgc)},
		Key:                  key,
	}}
}

func volumeClaim(pgc *pgv1.PostgresCluster) corev1.PersistentVolumeClaim {
	size := DefaultStorageSize
	if s := pgc.Spec.Storage.Size; s != nil && !s.IsZero() {
		size = *s
	}
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: DataVolume, Labels: Labels(pgc)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: pgc.Spec.Storage.StorageClassName,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
}

// ServerRunning is true while the PostgreSQL container of an instance pod
// runs: a pod being deleted may still serve until it has stopped.
func ServerRunning(pod *corev1.Pod) bool {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == PostgresContainer {
			return cs.State.Running != nil
		}
	}
	return false
}
