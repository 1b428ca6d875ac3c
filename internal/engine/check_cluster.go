package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/operator/instance"
	"oplab.dev/oplab/internal/operator/specs"
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
	if why := e.notServing(ctx, t, pgc, now); why != "" {
		return false, why
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
	if why := e.notServing(ctx, t, pgc, instance); why != "" {
		return false, why
	}
	return true, fmt.Sprintf("%s is the primary", instance)
}

// notServing says why instance, named primary in status, is not really
// the primary, or returns "": its pod must carry the primary label and its
// server must have been promoted (a status or a label edited by hand
// promotes nothing; see serverRole).
func (e *Engine) notServing(ctx context.Context, t lab.Target, pgc *pgv1.PostgresCluster, name string) string {
	pod, err := e.cs.CoreV1().Pods(namespace(t)).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("the primary %s has no pod: %v", name, err)
	}
	if role := pod.Labels[pgv1.LabelRole]; role != pgv1.RolePrimary {
		return fmt.Sprintf("%s is the primary in status, but its pod is labelled role=%q", name, role)
	}
	role, err := e.serverRole(ctx, pgc, pod)
	if err != nil {
		return fmt.Sprintf("%s is named primary, but its server could not say whether it is one: %v", name, err)
	}
	if role != "" && role != pgv1.RolePrimary {
		return fmt.Sprintf("%s is named primary, but its server is a %s: it was never promoted", name, role)
	}
	return ""
}

// sameCluster compares the PostgresCluster's UID with the one recorded
// when chaos ran (or when the attempt began).
func (e *Engine) sameCluster(ctx context.Context, t lab.Target, a *Attempt) (bool, string) {
	was := a.ClusterAtT0
	if was == "" {
		was = a.Baseline.ClusterUID
	}
	if was == "" {
		return false, fmt.Sprintf("no PostgresCluster %s was recorded when the exercise started, so its identity cannot be checked", t.Cluster)
	}
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return false, missing(t, err)
	}
	if string(pgc.UID) != was {
		return false, fmt.Sprintf("PostgresCluster %s was deleted and created again: repair the cluster you were given, do not replace it", t.Cluster)
	}
	return true, fmt.Sprintf("PostgresCluster %s is the one the exercise began with", t.Cluster)
}

// exactlyOnePrimary wants one pod labelled primary and one server running
// as a primary, the same pod: two servers that take writes are a split
// brain even when only one is behind the -rw Service.
func (e *Engine) exactlyOnePrimary(ctx context.Context, t lab.Target) (bool, string) {
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return false, missing(t, err)
	}
	pods, err := e.clusterPods(ctx, t)
	if err != nil {
		return false, err.Error()
	}
	var labelled []string
	for _, p := range pods {
		if p.Labels[pgv1.LabelRole] == pgv1.RolePrimary {
			labelled = append(labelled, p.Name)
		}
	}
	slices.Sort(labelled)
	switch len(labelled) {
	case 0:
		return false, fmt.Sprintf("no pod of %s is labelled role=primary", t.Cluster)
	case 1:
	default:
		return false, fmt.Sprintf("%d pods are labelled role=primary (%s), want 1", len(labelled), strings.Join(labelled, ", "))
	}
	servers, err := e.serverPrimaries(ctx, pgc, pods)
	if err != nil {
		return false, err.Error()
	}
	switch {
	case len(servers) > 1:
		return false, fmt.Sprintf("%d servers run as primary (%s): both take writes", len(servers), strings.Join(servers, ", "))
	case len(servers) == 0:
		return false, fmt.Sprintf("%s is labelled role=primary, but no server runs as a primary", labelled[0])
	case servers[0] != labelled[0]:
		return false, fmt.Sprintf("%s is labelled role=primary, but the server running as primary is %s's", labelled[0], servers[0])
	}
	return true, fmt.Sprintf("%s is the only pod labelled role=primary and the only server running as one", labelled[0])
}

// serverPrimaries names, sorted, the pods whose server runs as a primary
// (see serverRole). A pod being deleted, or whose PostgreSQL
// container does not run, has no server.
func (e *Engine) serverPrimaries(ctx context.Context, pgc *pgv1.PostgresCluster, pods []corev1.Pod) ([]string, error) {
	real := e.serversReal(pgc)
	var names []string
	for i := range pods {
		pod := &pods[i]
		if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning || (real && !specs.ServerRunning(pod)) {
			continue
		}
		role, err := e.serverRole(ctx, pgc, pod)
		if err != nil {
			return nil, fmt.Errorf("cannot tell whether the server of %s runs as a primary: %v", pod.Name, err)
		}
		if role == pgv1.RolePrimary {
			names = append(names, pod.Name)
		}
	}
	slices.Sort(names)
	return names, nil
}

// serversReal says whether the cluster's instances are real PostgreSQL
// servers, to be asked, rather than simulated ones. That follows from the
// provider (its pods run containers, so the operator is installed with SQL
// instance control), not from the PostgresCluster's status, which a
// learner can edit; only an engine with no provider goes by the status.
func (e *Engine) serversReal(pgc *pgv1.PostgresCluster) bool {
	if e.t.Provider != nil {
		return e.realPods
	}
	return pgc.Status.InstanceControl == instance.ModeSQL
}

// rwEndpointsAtPrimary looks at the EndpointSlices of the -rw Service.
func (e *Engine) rwEndpointsAtPrimary(ctx context.Context, t lab.Target) (bool, string) {
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return false, missing(t, err)
	}
	svc := t.Cluster + "-rw"
	if why := e.rwSelectsByRole(ctx, t); why != "" {
		return false, why
	}
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

// rwSelectsByRole says why the -rw Service does not select the primary by
// its role label, or returns "": a selector pinned to one pod routes to it
// whoever is primary after the next failover.
func (e *Engine) rwSelectsByRole(ctx context.Context, t lab.Target) string {
	svc, err := e.cs.CoreV1().Services(namespace(t)).Get(ctx, t.Cluster+"-rw", metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("cannot read Service %s-rw: %v", t.Cluster, err)
	}
	sel := svc.Spec.Selector
	if sel[pgv1.LabelRole] != pgv1.RolePrimary || sel[pgv1.LabelCluster] != t.Cluster || pinsPod(sel) {
		return fmt.Sprintf("Service %s selects %v, not the pod labelled %s=%s of %s: it no longer follows the primary", svc.Name, sel, pgv1.LabelRole, pgv1.RolePrimary, t.Cluster)
	}
	return ""
}

// pinsPod reports whether a selector names one pod (the StatefulSet's
// pod-name label).
func pinsPod(sel map[string]string) bool {
	_, pinned := sel["statefulset.kubernetes.io/pod-name"]
	return pinned
}

func (e *Engine) replicasReady(ctx context.Context, t lab.Target, count int) (bool, string) {
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return false, missing(t, err)
	}
	if want := int(pgc.Spec.Replicas); want != count {
		return false, fmt.Sprintf("%s asks for %d instances (spec.replicas), want %d", t.Cluster, want, count)
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

// annProvisionedBy names the provisioner of a dynamically provisioned
// volume; the PersistentVolume controller (or an external provisioner)
// sets it.
const annProvisionedBy = "pv.kubernetes.io/provisioned-by"

// claimsBound judges the claims the instances mount, found by name from
// spec.replicas, not by a label a hand can move: each must be bound to a
// volume that is bound back to it (a phase edited by hand binds nothing),
// which a provisioner made, and, when the check names one, ask for the
// storage class.
func (e *Engine) claimsBound(ctx context.Context, p *lab.ClaimsBound) (bool, string) {
	t := p.Target
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return false, missing(t, err)
	}
	n := int(pgc.Spec.Replicas)
	for i := range n {
		name := fmt.Sprintf("data-%s-%d", t.Cluster, i)
		if why := e.claimBound(ctx, namespace(t), name, p.StorageClassName); why != "" {
			return false, why
		}
	}
	return true, fmt.Sprintf("the claims of %s's %d instances are Bound", t.Cluster, n)
}

func (e *Engine) claimBound(ctx context.Context, ns, name, class string) string {
	c, err := e.cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("cannot read claim %s: %v", name, err)
	}
	if class != "" && (c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != class) {
		got := "the default class"
		if c.Spec.StorageClassName != nil {
			got = fmt.Sprintf("class %q", *c.Spec.StorageClassName)
		}
		return fmt.Sprintf("claim %s asks for %s, want %s: the cluster must keep the storage it was given", name, got, class)
	}
	if c.Status.Phase != "Bound" {
		return fmt.Sprintf("claim %s is %s, want Bound", name, c.Status.Phase)
	}
	if c.Spec.VolumeName == "" {
		return fmt.Sprintf("claim %s says Bound but names no volume", name)
	}
	pv, err := e.cs.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return fmt.Sprintf("claim %s names volume %s, which cannot be read: %v", name, c.Spec.VolumeName, err)
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.UID != c.UID || pv.Status.Phase != "Bound" {
		return fmt.Sprintf("claim %s says Bound, but volume %s is not bound to it", name, pv.Name)
	}
	// A volume made by hand binds as well, but holds nothing on a
	// provider whose pods run nothing; only a provisioner writes this
	// annotation (see package fence).
	if pv.Annotations[annProvisionedBy] == "" {
		return fmt.Sprintf("claim %s is bound to volume %s, which was made by hand, not provisioned by a StorageClass's provisioner", name, pv.Name)
	}
	return ""
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

// endpointSliceController is the manager label of the EndpointSlices the
// EndpointSlice controller keeps. A learner can make slices of their own
// for a Service, but not ones with this label (see package fence).
const endpointSliceController = "endpointslice-controller.k8s.io"

// rwTargets names the pods behind the ready endpoints of the -rw Service,
// as the EndpointSlice controller found them: a slice a hand made does not
// count.
func (e *Engine) rwTargets(ctx context.Context, t lab.Target) ([]string, error) {
	svc := t.Cluster + "-rw"
	sel := discoveryv1.LabelServiceName + "=" + svc + "," + discoveryv1.LabelManagedBy + "=" + endpointSliceController
	list, err := shared(ctx, "endpointslices/"+namespace(t)+"/"+sel, func() (*discoveryv1.EndpointSliceList, error) {
		return e.cs.DiscoveryV1().EndpointSlices(namespace(t)).List(ctx, metav1.ListOptions{LabelSelector: sel})
	}, (*discoveryv1.EndpointSliceList).DeepCopy)
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
