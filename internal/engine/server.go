package engine

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/operator/instance"
	"oplab.dev/oplab/internal/operator/specs"
	"oplab.dev/oplab/internal/podexec"
)

// serverRole says what the server of pod runs as: pgv1.RolePrimary or
// pgv1.RoleReplica. A simulated server's role is in its pod's annotations
// ("" before the operator has set the server up), which only the operator
// may write (see package fence); a real one is asked (see serversReal and
// serverInRecovery).
func (e *Engine) serverRole(ctx context.Context, pgc *pgv1.PostgresCluster, pod *corev1.Pod) (string, error) {
	if !e.serversReal(pgc) {
		return pod.Annotations[instance.AnnotationSimRole], nil
	}
	inRecovery, err := e.serverInRecovery(ctx, pod)
	switch {
	case err != nil:
		return "", err
	case inRecovery:
		return pgv1.RoleReplica, nil
	}
	return pgv1.RolePrimary, nil
}

// inRecoveryQuery asks the server in an instance's container whether it
// runs as a replica, over the local socket (pg_hba trusts local
// connections) as the cluster's superuser.
const inRecoveryQuery = `psql -XqtA -d postgres -U "$POSTGRES_USER" -c 'select pg_is_in_recovery()'`

// serverInRecovery asks the real PostgreSQL server of pod whether it is in
// recovery, that is a replica: pg_is_in_recovery(), run by psql in the
// pod's container through the API server's exec (the engine runs outside
// the cluster and cannot reach pod addresses). A label or a status edited
// by hand changes nothing here; only a promotion does.
func (e *Engine) serverInRecovery(ctx context.Context, pod *corev1.Pod) (bool, error) {
	out, err := podexec.Run(ctx, e.cfg, pod.Namespace, pod.Name, specs.PostgresContainer, "sh", "-c", inRecoveryQuery)
	if err != nil {
		return false, fmt.Errorf("ask the server of %s: %w", pod.Name, err)
	}
	switch got := strings.TrimSpace(out); got {
	case "t":
		return true, nil
	case "f":
		return false, nil
	default:
		return false, fmt.Errorf("ask the server of %s: pg_is_in_recovery() answered %q", pod.Name, got)
	}
}
