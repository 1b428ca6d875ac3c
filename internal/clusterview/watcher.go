package clusterview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	pgv1 "oplab.dev/oplab/api/v1"
)

// Watcher watches one cluster of a database operator (a PostgresCluster
// by default) and emits Views.
type Watcher struct {
	Config    *rest.Config
	Namespace string
	Name      string // of the custom resource
	// Kind is what is watched; Reference, a PostgresCluster, when nil.
	Kind *Kind
	// Coalesce is how long after a change the snapshot is taken, so that a
	// burst (a failover touches pods, endpoints, status and events at once)
	// makes one snapshot; 50 ms when zero.
	Coalesce time.Duration
	// MaxEvents is how many of the newest events a View holds; 30 when zero.
	MaxEvents int
	// Logger receives watch errors (a forbidden list, a lost connection);
	// discarded when nil.
	Logger *slog.Logger
}

// Run emits the View as JSON once the caches are filled and after every
// change that alters it, until ctx ends: a stream.Upstream.
func (w *Watcher) Run(ctx context.Context, emit func(data []byte, cursor string)) error {
	var last []byte
	return w.Views(ctx, func(v View) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode cluster view: %w", err)
		}
		if !bytes.Equal(b, last) {
			last = b
			emit(b, "") // whole snapshots: a new viewer takes the newest
		}
		return nil
	})
}

// sources are the watcher's informers.
type sources struct {
	pgc, pods, slices, events cache.SharedIndexInformer
}

// Views calls fn with a View once the caches are filled and after each
// burst of changes, until ctx ends (nil) or fn fails.
func (w *Watcher) Views(ctx context.Context, fn func(View) error) error {
	log := w.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	coalesce := w.Coalesce
	if coalesce <= 0 {
		coalesce = 50 * time.Millisecond
	}
	src, factories, err := w.informers()
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	poke := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { poke() },
		UpdateFunc: func(any, any) { poke() },
		DeleteFunc: func(any) { poke() },
	}
	for _, inf := range []cache.SharedIndexInformer{src.pgc, src.pods, src.slices, src.events} {
		if _, err := inf.AddEventHandler(h); err != nil {
			return fmt.Errorf("cluster view: %w", err)
		}
		_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			log.Warn("cluster view: watch failed", "namespace", w.Namespace, "name", w.Name, "err", err)
		})
	}
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		for _, f := range factories {
			f.Shutdown()
		}
	}()
	for _, f := range factories {
		f.Start(ctx.Done())
	}
	for _, inf := range []cache.SharedIndexInformer{src.pgc, src.pods, src.slices, src.events} {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return nil // ctx ended
		}
	}
	timer := time.NewTimer(0) // the first View at once
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			// Wait for the burst to settle; further changes until the timer
			// fires fold into the same snapshot.
			timer.Reset(coalesce)
		case <-timer.C:
			v, err := w.build(src)
			if err != nil {
				return err
			}
			if err := fn(v); err != nil {
				return err
			}
		}
	}
}

// factory is what the informer factories share.
type factory interface {
	Start(stop <-chan struct{})
	Shutdown()
}

// informers makes one informer per kind, each filtered on the server to
// what the view needs.
func (w *Watcher) informers() (sources, []factory, error) {
	if w.Config == nil || w.Namespace == "" || w.Name == "" {
		return sources{}, nil, errors.New("cluster view: a config, namespace and name are needed")
	}
	cs, err := kubernetes.NewForConfig(w.Config)
	if err != nil {
		return sources{}, nil, fmt.Errorf("cluster view: %w", err)
	}
	dyn, err := dynamic.NewForConfig(w.Config)
	if err != nil {
		return sources{}, nil, fmt.Errorf("cluster view: %w", err)
	}
	kind := w.kind()
	byName := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, w.Namespace, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", w.Name).String()
	})
	instances := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(w.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.SelectorFromSet(kind.Pods(w.Name)).String()
		}))
	services, _ := labels.NewRequirement(discoveryv1.LabelServiceName, selection.In, kind.services(w.Name))
	endpoints := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(w.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = labels.NewSelector().Add(*services).String()
		}))
	namespace := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(w.Namespace))
	src := sources{
		pgc:    byName.ForResource(kind.Resource).Informer(),
		pods:   instances.Core().V1().Pods().Informer(),
		slices: endpoints.Discovery().V1().EndpointSlices().Informer(),
		events: namespace.Core().V1().Events().Informer(),
	}
	// The caches keep only what the view reads (see bound.go).
	if err := kind.slim(src); err != nil {
		return sources{}, nil, fmt.Errorf("cluster view: %w", err)
	}
	return src, []factory{byName, instances, endpoints, namespace}, nil
}

func (w *Watcher) kind() Kind {
	if w.Kind == nil {
		return Reference
	}
	return *w.Kind
}

// build reads the caches into a View.
func (w *Watcher) build(src sources) (View, error) {
	v := View{Namespace: w.Namespace, Name: w.Name, Pods: []Pod{}, Endpoints: []Endpoint{}, Events: []Event{}}
	kind := w.kind()
	for _, o := range src.pgc.GetStore().List() {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		c, err := kind.Read(u)
		if err != nil {
			return View{}, fmt.Errorf("cluster view: read %s %s/%s: %w", kind.Resource.Resource, w.Namespace, w.Name, err)
		}
		v.Cluster = c
	}
	for _, o := range src.pods.GetStore().List() {
		if p, ok := o.(*corev1.Pod); ok {
			pod := podOf(p)
			pod.Role = kind.role(p.Labels)
			v.Pods = append(v.Pods, pod)
		}
	}
	if c := v.Cluster; c != nil && w.Kind != nil {
		// A third-party operator's status says less: the pods tell who is
		// ready and who leads, by the operator's role labels.
		for _, p := range v.Pods {
			if p.Ready && !p.Deleting {
				c.ReadyReplicas++
				if p.Role == pgv1.RolePrimary {
					c.CurrentPrimary = p.Name
				}
			}
		}
	}
	var slices []*discoveryv1.EndpointSlice
	for _, o := range src.slices.GetStore().List() {
		if s, ok := o.(*discoveryv1.EndpointSlice); ok {
			slices = append(slices, s)
		}
	}
	v.Endpoints = endpointsOf(w.Name, slices)
	var events []*corev1.Event
	for _, o := range src.events.GetStore().List() {
		if e, ok := o.(*corev1.Event); ok {
			events = append(events, e)
		}
	}
	max := w.MaxEvents
	if max <= 0 {
		max = 30
	}
	v.Events = eventsOf(events, max)
	v.EventsMore = len(events) - len(v.Events)
	sortPods(v.Pods)
	v.bound()
	return v, nil
}
