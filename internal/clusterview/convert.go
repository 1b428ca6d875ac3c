package clusterview

import (
	"cmp"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	pgv1 "oplab.dev/oplab/api/v1"
)

func clusterOf(p *pgv1.PostgresCluster) *Cluster {
	c := &Cluster{
		Phase: p.Status.Phase, ReadyReplicas: p.Status.ReadyReplicas,
		CurrentPrimary: p.Status.CurrentPrimary, TargetPrimary: p.Status.TargetPrimary,
		Generation: p.Generation, ObservedGeneration: p.Status.ObservedGeneration,
		Deleting: p.DeletionTimestamp != nil, Replicas: p.Spec.Replicas,
	}
	for _, cd := range p.Status.Conditions {
		c.Conditions = append(c.Conditions, Condition{
			Type: text(cd.Type), Status: text(string(cd.Status)), Reason: text(cd.Reason), Message: text(cd.Message),
			LastTransitionTime: cd.LastTransitionTime.UTC(),
		})
	}
	return c
}

func podOf(p *corev1.Pod) Pod {
	out := Pod{
		Name: p.Name, Phase: text(string(p.Status.Phase)),
		Deleting: p.DeletionTimestamp != nil, IP: p.Status.PodIP, Node: p.Spec.NodeName,
		Created: p.CreationTimestamp.UTC(),
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			out.Ready = c.Status == corev1.ConditionTrue
		}
	}
	return out
}

// sortPods orders pods by name, so db-0, db-1, ... and snapshots compare
// equal when nothing changed.
func sortPods(pods []Pod) {
	slices.SortFunc(pods, func(a, b Pod) int { return cmp.Compare(a.Name, b.Name) })
}

// endpointsOf gathers the addresses of the -rw and -ro Services from their
// EndpointSlices; both Services are always listed, empty when they have no
// endpoint (a fenced primary leaves -rw empty).
func endpointsOf(name string, ss []*discoveryv1.EndpointSlice) []Endpoint {
	out := []Endpoint{{Service: name + "-rw", Addresses: []Address{}}, {Service: name + "-ro", Addresses: []Address{}}}
	for _, s := range ss {
		i := slices.IndexFunc(out, func(e Endpoint) bool { return e.Service == s.Labels[discoveryv1.LabelServiceName] })
		if i < 0 {
			continue
		}
		for _, ep := range s.Endpoints {
			a := Address{Ready: ep.Conditions.Ready == nil || *ep.Conditions.Ready}
			if ep.TargetRef != nil && ep.TargetRef.Kind == "Pod" {
				a.Pod = ep.TargetRef.Name
			}
			for _, ip := range ep.Addresses {
				a.IP = ip
				out[i].Addresses = append(out[i].Addresses, a)
			}
		}
	}
	for _, e := range out {
		slices.SortFunc(e.Addresses, func(a, b Address) int { return cmp.Or(cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.IP, b.IP)) })
	}
	return out
}

// eventsOf returns the newest max events, newest first.
func eventsOf(evs []*corev1.Event, max int) []Event {
	out := make([]Event, 0, len(evs))
	for _, e := range evs {
		out = append(out, Event{
			Type: text(e.Type), Reason: text(e.Reason), Message: text(e.Message), Count: e.Count,
			Object: text(e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name), Time: eventTime(e),
		})
	}
	slices.SortFunc(out, func(a, b Event) int {
		return cmp.Or(b.Time.Compare(a.Time), cmp.Compare(a.Object, b.Object), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Message, b.Message))
	})
	if len(out) > max {
		out = out[:max]
	}
	return out
}

// eventTime is when an event was last seen, whichever API wrote it.
func eventTime(e *corev1.Event) time.Time {
	switch {
	case e.Series != nil && !e.Series.LastObservedTime.IsZero():
		return e.Series.LastObservedTime.UTC()
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.UTC()
	case !e.EventTime.IsZero():
		return e.EventTime.UTC()
	case !e.FirstTimestamp.IsZero():
		return e.FirstTimestamp.UTC()
	}
	return e.CreationTimestamp.UTC()
}
