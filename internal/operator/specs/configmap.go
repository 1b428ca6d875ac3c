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
			BootstrapScript:   bootstrapSh,
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

// BootstrapScript is the ConfigMap key of the init container's script.
const BootstrapScript = "bootstrap.sh"

// ownerFile, beside the data directory, holds the UID of the
// PostgresCluster whose instance wrote it.
const ownerFile = "cluster-uid"

// formerPrimaryFile, beside the data directory, marks data that ran as a
// primary and was started in recovery by the bootstrap script.
const formerPrimaryFile = "former-primary"

// bootstrapSh runs before PostgreSQL in every instance pod. Whether an
// instance starts as a replica is decided by its data directory
// (standby.signal), so the script prepares it: when a primary answers on
// the -rw Service, the instance must be its replica, cloned with
// pg_basebackup unless it already is one (a former primary is cloned
// afresh). With no primary, pod 0 starts initdb on its first start, an
// instance with replica data starts as a replica, and the others wait for
// a primary to clone.
//
// A former primary whose pod comes back while no primary answers (the
// operator fenced it during a failover or a switchover, or every pod
// restarted) never starts as a primary on its own: that would make two
// primaries. Its data starts in recovery with no upstream (standby.signal,
// primary_conninfo removed, formerPrimaryFile written), and the operator
// decides: it promotes the server again (pg_promote()) when it is still the
// primary, or restarts it to be cloned from the new one, since its WAL may
// have gone past the point where the new primary's timeline forked off.
//
// A claim outlives its PostgresCluster (a StatefulSet keeps its claims), so
// a cluster deleted and created again under the same name finds the old
// cluster's data: another system identifier, another password, settings
// its replicas refuse to follow. The script writes the cluster's UID
// beside the data directory (ownerFile) and removes a data directory that
// another cluster wrote; data with no owner yet is adopted, not removed.
const bootstrapSh = `#!/bin/sh
# Managed by pg-operator; edits are overwritten.
set -eu
ordinal="${HOSTNAME##*-}"
owner_file="$(dirname "$PGDATA")/` + ownerFile + `"
former_primary="$(dirname "$PGDATA")/` + formerPrimaryFile + `"
has_data() { [ -s "$PGDATA/PG_VERSION" ]; }
is_replica() { [ -f "$PGDATA/standby.signal" ] && [ ! -e "$former_primary" ]; }
if [ -n "${CLUSTER_UID:-}" ]; then
  owner=$(cat "$owner_file" 2>/dev/null || true)
  if [ -n "$owner" ] && [ "$owner" != "$CLUSTER_UID" ] && has_data; then
    echo "bootstrap: removing the data of an earlier PostgresCluster of this name (uid $owner)"
    rm -rf "$PGDATA"
  fi
  echo "$CLUSTER_UID" > "$owner_file"
fi
while :; do
  if pg_isready -q -h "$PRIMARY_HOST" -p 5432 -t 2; then
    if has_data && is_replica; then
      echo "bootstrap: replica data present; streaming from $PRIMARY_HOST"
      exit 0
    fi
    echo "bootstrap: cloning the primary at $PRIMARY_HOST"
    rm -rf "$PGDATA" "$former_primary"
    pg_basebackup -h "$PRIMARY_HOST" -p 5432 -D "$PGDATA" -R -X stream -c fast
    chmod 0700 "$PGDATA"
    exit 0
  fi
  if has_data && [ ! -f "$PGDATA/standby.signal" ]; then
    echo "bootstrap: no primary answers on $PRIMARY_HOST; starting this former primary's data as a standby: the operator promotes it or has it cloned"
    touch "$former_primary" "$PGDATA/standby.signal"
    sed -i '/^primary_conninfo/d' "$PGDATA/postgresql.auto.conf" 2>/dev/null || true
    exit 0
  fi
  if has_data; then
    echo "bootstrap: no primary answers on $PRIMARY_HOST; starting with local data"
    exit 0
  fi
  if [ "$ordinal" = 0 ]; then
    echo "bootstrap: no data and no primary: initialising a new cluster"
    exit 0
  fi
  echo "bootstrap: waiting for a primary on $PRIMARY_HOST"
  sleep 2
done
`
