package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/lab"
)

// missing explains a failure to read the PostgresCluster.
func missing(t lab.Target, err error) string {
	if apierrors.IsNotFound(err) {
		return fmt.Sprintf("PostgresCluster %s does not exist in namespace %s", t.Cluster, namespace(t))
	}
	return fmt.Sprintf("cannot read PostgresCluster %s: %v", t.Cluster, err)
}

func (e *Engine) conditionIs(ctx context.Context, t lab.Target, typ, status, reason string) (bool, string) {
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return false, missing(t, err)
	}
	return conditionMatches(pgc, typ, status, reason)
}

// conditionMatches compares a condition of pgc with the wanted status and
// (when given) reason.
func conditionMatches(pgc *pgv1.PostgresCluster, typ, status, reason string) (bool, string) {
	c := condition(pgc, typ)
	want := status
	if reason != "" {
		want += " (" + reason + ")"
	}
	if c == nil {
		return false, fmt.Sprintf("%s has no %s condition yet, want %s", pgc.Name, typ, want)
	}
	got := fmt.Sprintf("%s (%s: %s)", c.Status, c.Reason, c.Message)
	if string(c.Status) != status || reason != "" && c.Reason != reason {
		return false, fmt.Sprintf("%s is %s %s, want %s", pgc.Name, typ, got, want)
	}
	if c.ObservedGeneration != 0 && c.ObservedGeneration < pgc.Generation {
		return false, fmt.Sprintf("%s is %s %s, but for an older generation (%d < %d)", pgc.Name, typ, got, c.ObservedGeneration, pgc.Generation)
	}
	return true, fmt.Sprintf("%s is %s %s", pgc.Name, typ, got)
}

// primaryChanged compares the primary with the one recorded before chaos
// (or when the attempt began).
func (e *Engine) primaryChanged(ctx context.Context, t lab.Target, a *Attempt) (bool, string) {
	was := a.PrimaryAtT0
	if was == "" {
		was = a.Baseline.Primary
	}
	if was == "" {
		return false, "no primary was recorded when the exercise started, so a change cannot be seen"
	}
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return false, missing(t, err)
	}
	now := pgc.Status.CurrentPrimary
	switch now {
	case "":
		return false, fmt.Sprintf("%s has no current primary (it was %s)", t.Cluster, was)
	case was:
		return false, fmt.Sprintf("the primary is still %s", was)
	}
	return true, fmt.Sprintf("the primary is now %s (it was %s)", now, was)
}

func (e *Engine) primaryIs(ctx context.Context, t lab.Target, instance string) (bool, string) {
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return false, missing(t, err)
	}
	if cur := pgc.Status.CurrentPrimary; cur != instance {
		return false, fmt.Sprintf("the primary is %q, want %s", cur, instance)
	}
	pod, err := e.cs.CoreV1().Pods(namespace(t)).Get(ctx, instance, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Sprintf("the primary %s has no pod: %v", instance, err)
	}
	if role := pod.Labels[pgv1.LabelRole]; role != pgv1.RolePrimary {
		return false, fmt.Sprintf("%s is the primary in status, but its pod is labelled role=%q", instance, role)
	}
	return true, fmt.Sprintf("%s is the primary", instance)
}

func (e *Engine) exactlyOnePrimary(ctx context.Context, t lab.Target) (bool, string) {
	pods, err := e.clusterPods(ctx, t)
	if err != nil {
		return false, err.Error()
	}
	var primaries []string
	for _, p := range pods {
		if p.Labels[pgv1.LabelRole] == pgv1.RolePrimary {
			primaries = append(primaries, p.Name)
		}
	}
	slices.Sort(primaries)
	switch len(primaries) {
	case 0:
		return false, fmt.Sprintf("no pod of %s is labelled role=primary", t.Cluster)
	case 1:
		return true, fmt.Sprintf("%s is the only pod labelled role=primary", primaries[0])
	}
	return false, fmt.Sprintf("%d pods are labelled role=primary (%s), want 1", len(primaries), strings.Join(primaries, ", "))
}

// rwEndpointsAtPrimary looks at the EndpointSlices of the -rw Service.
func (e *Engine) rwEndpointsAtPrimary(ctx context.Context, t lab.Target) (bool, string) {
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return false, missing(t, err)
	}
	svc := t.Cluster + "-rw"
	ready, err := e.rwTargets(ctx, t)
	if err != nil {
		return false, err.Error()
	}
	primary := pgc.Status.CurrentPrimary
	switch {
	case primary == "":
		return false, fmt.Sprintf("%s has no current primary", t.Cluster)
	case len(ready) == 0:
		return false, fmt.Sprintf("%s has no ready endpoints, want %s", svc, primary)
	case len(ready) == 1 && ready[0] == primary:
		return true, fmt.Sprintf("%s points at the primary %s", svc, primary)
	}
	return false, fmt.Sprintf("%s points at %s, want only the primary %s", svc, strings.Join(ready, ", "), primary)
}

func (e *Engine) replicasReady(ctx context.Context, t lab.Target, count int) (bool, string) {
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return false, missing(t, err)
	}
	got := int(pgc.Status.ReadyReplicas)
	if got != count {
		return false, fmt.Sprintf("%d of %s's instances are ready, want %d", got, t.Cluster, count)
	}
	return true, fmt.Sprintf("%d instances are ready", got)
}

func (e *Engine) generationCaughtUp(ctx context.Context, t lab.Target) (bool, string) {
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return false, missing(t, err)
	}
	if pgc.Status.ObservedGeneration != pgc.Generation {
		return false, fmt.Sprintf("status.observedGeneration is %d, metadata.generation is %d: the operator has not acted on the latest spec", pgc.Status.ObservedGeneration, pgc.Generation)
	}
	return true, fmt.Sprintf("the operator has seen generation %d", pgc.Generation)
}

func (e *Engine) claimsBound(ctx context.Context, t lab.Target) (bool, string) {
	pvcs, err := e.clusterClaims(ctx, t)
	if err != nil {
		return false, err.Error()
	}
	if len(pvcs) == 0 {
		return false, fmt.Sprintf("%s has no PersistentVolumeClaims yet", t.Cluster)
	}
	for _, c := range pvcs {
		if c.Status.Phase != "Bound" {
			return false, fmt.Sprintf("claim %s is %s, want Bound", c.Name, c.Status.Phase)
		}
	}
	return true, fmt.Sprintf("all %d claims of %s are Bound", len(pvcs), t.Cluster)
}

func (e *Engine) claimsPending(ctx context.Context, t lab.Target) (bool, string) {
	pvcs, err := e.clusterClaims(ctx, t)
	if err != nil {
		return false, err.Error()
	}
	for _, c := range pvcs {
		if c.Status.Phase == "Pending" {
			return true, fmt.Sprintf("claim %s is Pending", c.Name)
		}
	}
	return false, fmt.Sprintf("none of the %d claims of %s is Pending", len(pvcs), t.Cluster)
}

// rwTargets names the pods behind the ready endpoints of the -rw Service.
func (e *Engine) rwTargets(ctx context.Context, t lab.Target) ([]string, error) {
	svc := t.Cluster + "-rw"
	list, err := e.cs.DiscoveryV1().EndpointSlices(namespace(t)).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return nil, fmt.Errorf("cannot list the endpoints of %s: %w", svc, err)
	}
	var ready []string
	for _, s := range list.Items {
		for _, ep := range s.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready || ep.TargetRef == nil {
				continue
			}
			ready = append(ready, ep.TargetRef.Name)
		}
	}
	slices.Sort(ready)
	return slices.Compact(ready), nil
}
