package engine

import (
	"context"
	"fmt"
	"strconv"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/quiz"
)

var _ quiz.ClusterAnswers = (*Engine)(nil)

// Answer reads the true answer to a cluster question of a quiz from the
// target; it implements quiz.ClusterAnswers.
func (e *Engine) Answer(ctx context.Context, q quiz.Query) (string, error) {
	t := lab.Target{Cluster: q.Cluster, Namespace: q.Namespace}
	// The third-party data planes, answered as their checks verify them.
	switch q.Query {
	case "patroniLeader":
		leader, ok, why := e.patroniLead(ctx, &lab.PatroniLeader{Cluster: q.Cluster, Namespace: q.Namespace}, nil)
		if !ok {
			return "", fmt.Errorf("answer patroniLeader: %s", why)
		}
		return leader, nil
	case "sentinelMaster":
		master, ok, why := e.sentinelLead(ctx, &lab.SentinelMaster{Name: q.Cluster, Namespace: q.Namespace}, nil)
		if !ok {
			return "", fmt.Errorf("answer sentinelMaster: %s", why)
		}
		return master, nil
	}
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return "", fmt.Errorf("answer %s: %w", q.Query, err)
	}
	switch q.Query {
	case "currentPrimary":
		return pgc.Status.CurrentPrimary, nil
	case "targetPrimary":
		return pgc.Status.TargetPrimary, nil
	case "rwEndpoint":
		pods, err := e.rwTargets(ctx, t)
		if err != nil {
			return "", fmt.Errorf("answer rwEndpoint: %w", err)
		}
		if len(pods) != 1 {
			return "", fmt.Errorf("answer rwEndpoint: %s-rw has %d ready endpoints, want 1", q.Cluster, len(pods))
		}
		return pods[0], nil
	case "readyReplicas":
		return strconv.Itoa(int(pgc.Status.ReadyReplicas)), nil
	case "specReplicas":
		return strconv.Itoa(int(pgc.Spec.Replicas)), nil
	case "observedGeneration":
		return strconv.FormatInt(pgc.Status.ObservedGeneration, 10), nil
	case "podCount":
		pods, err := e.clusterPods(ctx, t)
		if err != nil {
			return "", err
		}
		return strconv.Itoa(len(pods)), nil
	case "conditionStatus", "conditionReason":
		c := condition(pgc, q.Condition)
		if c == nil {
			return "", fmt.Errorf("answer %s: %s has no %s condition", q.Query, q.Cluster, q.Condition)
		}
		if q.Query == "conditionStatus" {
			return string(c.Status), nil
		}
		return c.Reason, nil
	case "storageClass":
		if sc := pgc.Spec.Storage.StorageClassName; sc != nil {
			return *sc, nil
		}
		pvcs, err := e.clusterClaims(ctx, t)
		if err != nil {
			return "", err
		}
		for _, c := range pvcs {
			if c.Spec.StorageClassName != nil {
				return *c.Spec.StorageClassName, nil
			}
		}
		return "", fmt.Errorf("answer storageClass: %s names no storage class and has no claims yet", q.Cluster)
	}
	return "", fmt.Errorf("answer: unknown query %q", q.Query)
}
