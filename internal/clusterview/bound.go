package clusterview

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"oplab.dev/oplab/internal/store"
)

// What a View carries and what the watcher's caches keep, whatever a
// learner makes in their cluster: a Deployment of a thousand replicas
// with the instance's labels copied and large annotations makes a
// thousand pods the watch selects, and the server must not hold them
// whole, nor send them all on every change.
const (
	// MaxPods bounds the pods a View lists: the first by name; PodsMore
	// counts the others.
	MaxPods = 200
	// MaxAddresses bounds the addresses of each of a View's Endpoints:
	// the first by pod and address; AddressesMore counts the others.
	MaxAddresses = 200
	// MaxConditions bounds the custom resource's conditions a View
	// carries: the first as its status lists them.
	MaxConditions = 20
	// MaxText bounds, in bytes, each text a View carries and the caches
	// keep: an event's message, a condition's, a pod's phase.
	MaxText = 512
)

// text cuts s to MaxText.
func text(s string) string { return store.Cut(s, MaxText) }

// The transforms below run on each object before an informer stores it
// (cache.SharedIndexInformer.SetTransform): they keep what convert.go and
// the Kinds read, and drop the rest (annotations, managed fields, owner
// references, specs the view does not draw). They change the object in
// place, as client-go allows, and are idempotent.

// slimMeta keeps of m what a store needs to key and replace an object and
// what the view reads: name, namespace, uid, resource version, creation
// and deletion times, and the labels named.
func slimMeta(m *metav1.ObjectMeta, labels ...string) {
	kept := map[string]string{}
	for _, l := range labels {
		if v, ok := m.Labels[l]; ok {
			kept[l] = text(v)
		}
	}
	*m = metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp, Labels: kept}
}

// slimPod keeps of a pod what podOf and Kind.role read.
func (k Kind) slimPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	slimMeta(&p.ObjectMeta, k.RoleLabel)
	p.Spec = corev1.PodSpec{NodeName: p.Spec.NodeName}
	var ready []corev1.PodCondition
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = append(ready[:0], corev1.PodCondition{Type: c.Type, Status: c.Status})
		}
	}
	p.Status = corev1.PodStatus{Phase: corev1.PodPhase(text(string(p.Status.Phase))), PodIP: text(p.Status.PodIP), Conditions: ready}
	return p, nil
}

// slimSlice keeps of an EndpointSlice what endpointsOf reads.
func slimSlice(obj any) (any, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return obj, nil
	}
	slimMeta(&s.ObjectMeta, discoveryv1.LabelServiceName)
	s.Ports = nil
	for i, ep := range s.Endpoints {
		e := discoveryv1.Endpoint{Addresses: ep.Addresses, Conditions: discoveryv1.EndpointConditions{Ready: ep.Conditions.Ready}}
		if r := ep.TargetRef; r != nil {
			e.TargetRef = &corev1.ObjectReference{Kind: r.Kind, Name: r.Name}
		}
		s.Endpoints[i] = e
	}
	return s, nil
}

// slimEvent keeps of an Event what eventsOf reads, its texts cut to
// MaxText.
func slimEvent(obj any) (any, error) {
	e, ok := obj.(*corev1.Event)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Event{
		Type: text(e.Type), Reason: text(e.Reason), Message: text(e.Message), Count: e.Count,
		InvolvedObject: corev1.ObjectReference{Kind: text(e.InvolvedObject.Kind), Name: text(e.InvolvedObject.Name)},
		LastTimestamp:  e.LastTimestamp, EventTime: e.EventTime, FirstTimestamp: e.FirstTimestamp,
	}
	if e.Series != nil {
		slim.Series = &corev1.EventSeries{LastObservedTime: e.Series.LastObservedTime}
	}
	slim.ObjectMeta = e.ObjectMeta
	slimMeta(&slim.ObjectMeta)
	return slim, nil
}

// slimResource drops the custom resource's metadata that no Kind reads;
// its spec and status are the Kind's to read (Kind.Read), and the object
// is one, selected by name.
func slimResource(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		for _, f := range []string{"annotations", "managedFields", "labels", "ownerReferences", "finalizers"} {
			delete(md, f)
		}
	}
	return u, nil
}

// slim sets each informer's transform; before the informers start.
func (k Kind) slim(src sources) error {
	for _, t := range []struct {
		inf cache.SharedIndexInformer
		fn  cache.TransformFunc
	}{{src.pgc, slimResource}, {src.pods, k.slimPod}, {src.slices, slimSlice}, {src.events, slimEvent}} {
		if err := t.inf.SetTransform(t.fn); err != nil {
			return err
		}
	}
	return nil
}
