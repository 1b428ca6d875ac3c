package specs

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	pgv1 "oplab.dev/oplab/api/v1"
)

// ConfigMap builds the ConfigMap with postgresql.conf and pg_hba.conf,
// mounted into every instance.
func ConfigMap(pgc *pgv1.PostgresCluster) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: objectMeta(pgc, ConfigMapName(pgc)),
		Data: map[string]string{
			"postgresql.conf": postgresqlConf(pgc),
			"pg_hba.conf":     pgHBAConf,
		},
	}
	withHash(&cm.ObjectMeta, cm.Data)
	return cm
}

func postgresqlConf(pgc *pgv1.PostgresCluster) string {
	return fmt.Sprintf(`# Managed by pg-operator for PostgresCluster %s; edits are overwritten.
listen_addresses = '*'
port = %d
wal_level = replica
hot_standby = on
max_wal_senders = %d
max_replication_slots = %d
wal_keep_size = '512MB'
wal_log_hints = on
hba_file = '/etc/postgresql/pg_hba.conf'
`, pgc.Name, PostgresPort, pgc.Spec.Replicas+4, pgc.Spec.Replicas+4)
}

const pgHBAConf = `# Managed by pg-operator; edits are overwritten.
local   all          all                 trust
host    all          all   127.0.0.1/32  trust
host    replication  all   0.0.0.0/0     scram-sha-256
host    all          all   0.0.0.0/0     scram-sha-256
`
