package specs

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	pgv1 "oplab.dev/oplab/api/v1"
)

// CronJob builds the backup CronJob from spec.backup, or returns nil when
// the cluster has no backup schedule (the reconciler then removes it).
// Each run takes a base backup from the primary through the -rw Service.
func CronJob(pgc *pgv1.PostgresCluster) *batchv1.CronJob {
	b := pgc.Spec.Backup
	if b == nil {
		return nil
	}
	cj := &batchv1.CronJob{
		ObjectMeta: objectMeta(pgc, CronJobName(pgc)),
		Spec: batchv1.CronJobSpec{
			Schedule:                   b.Schedule,
			ConcurrencyPolicy:          batchv1.ForbidConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](3),
			FailedJobsHistoryLimit:     ptr.To[int32](3),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To[int32](2),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: backupLabels(pgc)},
					Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyOnFailure,
						Containers: []corev1.Container{{
							Name:  "backup",
							Image: "postgres:" + pgc.Spec.Version,
							Command: []string{"sh", "-c",
								`pg_basebackup -h "$PGHOST" -D "/backups/$(date +%Y%m%dT%H%M%S)" -Ft -z -X fetch && ` +
									`find /backups -mindepth 1 -maxdepth 1 -mtime "+$RETENTION_DAYS" -exec rm -rf {} +`},
							Env: []corev1.EnvVar{
								{Name: "PGHOST", Value: ServiceName(pgc, pgv1.RolePrimary)},
								{Name: "PGUSER", ValueFrom: secretKey(pgc, SecretKeyUsername)},
								{Name: "PGPASSWORD", ValueFrom: secretKey(pgc, SecretKeyPassword)},
								{Name: "RETENTION", Value: b.Retention},
								{Name: "RETENTION_DAYS", Value: retentionDays(b.Retention)},
							},
							VolumeMounts: []corev1.VolumeMount{{Name: "backups", MountPath: "/backups"}},
						}},
						Volumes: []corev1.Volume{{Name: "backups", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
					},
				},
			}},
		},
	}
	withHash(&cj.ObjectMeta, cj.Spec)
	return cj
}

// retentionDays converts a retention such as 7d or 4w to days ("7", "28").
// The CRD's pattern has already checked its form; anything else keeps a
// week.
func retentionDays(r string) string {
	if len(r) < 2 {
		return "7"
	}
	n := 0
	for _, c := range r[:len(r)-1] {
		if c < '0' || c > '9' {
			return "7"
		}
		n = n*10 + int(c-'0')
	}
	switch r[len(r)-1] {
	case 'd':
	case 'w':
		n *= 7
	default:
		return "7"
	}
	return strconv.Itoa(n)
}

// backupLabels label backup pods apart from instance pods, so that neither
// the StatefulSet, the Services nor the PodDisruptionBudget select them.
func backupLabels(pgc *pgv1.PostgresCluster) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":       "postgresql-backup",
		"app.kubernetes.io/instance":   pgc.Name,
		"app.kubernetes.io/managed-by": "pg-operator",
	}
}
