package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/operator/instance"
)

// Resync is how often a healthy cluster is looked at again without any
// event, so that a primary that stops answering SQL is noticed.
const Resync = 30 * time.Second

// conflictRetry is how soon a pass that lost an optimistic-lock race runs
// again, once the cache has caught up.
const conflictRetry = 200 * time.Millisecond

// Reconciler reconciles PostgresClusters.
type Reconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server directly: Secrets, Events and
	// PersistentVolumeClaims, which are not cached.
	APIReader client.Reader
	// Instance controls the PostgreSQL servers.
	Instance instance.Instance
	// Recorder emits events on PostgresClusters.
	Recorder events.EventRecorder
	// Metrics are updated by every reconcile; nil disables them.
	Metrics *Metrics
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// New returns a Reconciler wired to mgr.
func New(mgr ctrl.Manager, inst instance.Instance, m *Metrics) *Reconciler {
	return &Reconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Instance:  inst,
		Recorder:  mgr.GetEventRecorder("pg-operator"),
		Metrics:   m,
	}
}

// SetupWithManager registers the controller: it watches PostgresClusters
// (spec and annotation changes), the objects they own, and their pods.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("postgrescluster").
		For(&pgv1.PostgresCluster{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&appsv1.StatefulSet{}).
		Owns(&corev1.Service{}).
		Owns(&corev1.ConfigMap{}).
		Owns(&batchv1.CronJob{}).
		Owns(&policyv1.PodDisruptionBudget{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToCluster)).
		WithOptions(controller.Options{RateLimiter: RateLimiter()}).
		Complete(r)
}

// podToCluster maps an instance pod to its PostgresCluster by label.
func podToCluster(_ context.Context, o client.Object) []reconcile.Request {
	name := o.GetLabels()[pgv1.LabelCluster]
	if name == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Reconcile brings one PostgresCluster towards its spec and logs one line
// saying what it read, what differed, what it did and how long it took.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	start := r.now()
	var pgc pgv1.PostgresCluster
	if err := r.Client.Get(ctx, req.NamespacedName, &pgc); err != nil {
		if apierrors.IsNotFound(err) {
			r.Metrics.forget(req.Namespace, req.Name)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("get PostgresCluster %s: %w", req.NamespacedName, err)
	}
	if !pgc.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, nil // owned objects are garbage-collected
	}
	p := &pass{r: r, pgc: &pgc, written: *pgc.Status.DeepCopy(), now: start}
	res, err := p.run(ctx)
	p.log(ctx, r.now().Sub(start), res, err)
	return res, err
}

// pass is one reconcile of one cluster: what it read and did, for the log.
type pass struct {
	r       *Reconciler
	pgc     *pgv1.PostgresCluster
	written pgv1.PostgresClusterStatus // the status as last stored
	now     time.Time

	read    []string
	differs []string
	did     []string
	requeue time.Duration
}

func (p *pass) observe(format string, a ...any) { p.read = append(p.read, fmt.Sprintf(format, a...)) }
func (p *pass) differ(format string, a ...any) {
	p.differs = append(p.differs, fmt.Sprintf(format, a...))
}
func (p *pass) done(format string, a ...any) { p.did = append(p.did, fmt.Sprintf(format, a...)) }

// after asks for another pass within d.
func (p *pass) after(d time.Duration) {
	if d > 0 && (p.requeue == 0 || d < p.requeue) {
		p.requeue = d
	}
}

// run reads the cluster, settles roles, applies the owned objects and
// writes the status.
func (p *pass) run(ctx context.Context) (reconcile.Result, error) {
	ms, err := p.members(ctx)
	if err == nil {
		err = p.roles(ctx, ms)
	}
	var sts *appsv1.StatefulSet
	if err == nil {
		sts, err = p.objects(ctx, ms)
	}
	if apierrors.IsConflict(err) {
		p.done("stopped: %v; will read again", err)
		return reconcile.Result{RequeueAfter: conflictRetry}, nil
	}
	if err != nil {
		p.setError(err)
		if werr := p.writeStatus(ctx); werr != nil {
			err = errors.Join(err, werr)
		}
		return reconcile.Result{}, err
	}
	t := p.diagnose(ctx, sts, ms)
	p.setStatus(ms, sts, t)
	if err := p.writeStatus(ctx); err != nil {
		if apierrors.IsConflict(err) {
			p.done("status write conflicted; will read again")
			return reconcile.Result{RequeueAfter: conflictRetry}, nil
		}
		return reconcile.Result{}, err
	}
	p.r.Metrics.observe(p.pgc)
	p.after(Resync)
	return reconcile.Result{RequeueAfter: p.requeue}, nil
}
