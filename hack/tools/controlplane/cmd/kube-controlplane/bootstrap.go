package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/component-helpers/auth/rbac/reconciliation"
	schedulingapiv1 "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	rbacrest "k8s.io/kubernetes/pkg/registry/rbac/rest"
	schedulingrest "k8s.io/kubernetes/pkg/registry/scheduling/rest"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

// The API server's readiness waits on two post-start hooks that make the
// objects every cluster starts with: the RBAC bootstrap policy and the system
// PriorityClasses. Upstream's hooks poll with wait.Poll, which sleeps its
// one-second interval before the first attempt, so a new cluster's API
// server is ready a second later than it could be. kube-controlplane
// disables the two and registers hooks that make the same objects, from the
// same bootstrap data and with the same reconciliation, starting at once.
//
// What upstream's RBAC hook does beyond this — copying roles of clusters
// upgraded from releases before 1.6 and 1.8 — never applies to a cluster made
// here.
const (
	rbacHookName     = "oplab/rbac-bootstrap-roles"
	priorityHookName = "oplab/bootstrap-system-priority-classes"
	bootstrapRetry   = 100 * time.Millisecond
	bootstrapTimeout = 30 * time.Second
)

// seededVar, set to 1 by whoever starts kube-controlplane on a copy of a
// seed made by this same binary (the embedded provider's seeds are keyed by
// the binaries), says the bootstrap RBAC policy is in etcd as this binary
// would make it, and nothing has changed it since: the RBAC hook then skips
// its 130 reads. A cluster started again must not set it; what its learner
// did to the policy is then put right, as upstream does at every start.
const seededVar = "KUBE_CONTROLPLANE_SEEDED"

// replaceBootstrapHooks swaps upstream's two bootstrap hooks for ours in the
// kube-apiserver's generic configuration.
func replaceBootstrapHooks(c *genericapiserver.Config, seeded bool) error {
	c.DisabledPostStartHooks.Insert(rbacrest.PostStartHookName, schedulingrest.PostStartHookName)
	ensureRBAC := ensureRBACPolicy
	if seeded {
		ensureRBAC = func(context.Context, kubernetes.Interface) error { return nil }
	}
	if err := c.AddPostStartHook(rbacHookName, bootstrapHook(ensureRBAC)); err != nil {
		return err
	}
	return c.AddPostStartHook(priorityHookName, bootstrapHook(ensurePriorityClasses))
}

// bootstrapHook retries ensure every bootstrapRetry until it succeeds; as
// upstream's hooks do, it fails the server when it cannot.
func bootstrapHook(ensure func(context.Context, kubernetes.Interface) error) genericapiserver.PostStartHookFunc {
	return func(hc genericapiserver.PostStartHookContext) error {
		client, err := kubernetes.NewForConfig(hc.LoopbackClientConfig)
		if err != nil {
			return err
		}
		var last error
		err = wait.PollUntilContextTimeout(hc, bootstrapRetry, bootstrapTimeout, true, func(ctx context.Context) (bool, error) {
			last = ensure(ctx, client)
			return last == nil, nil
		})
		if err != nil {
			return fmt.Errorf("%w: %w", err, last)
		}
		return nil
	}
}

// retryable is the errors upstream's hooks retry at once.
func retryable(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsServiceUnavailable(err)
}

// rbacWorkers is how many bootstrap objects are reconciled at once. Each
// takes a request or two; one after another, the 130 of them held the API
// server's readiness for half a second even when all exist (a cluster
// started from a seed, a restart).
const rbacWorkers = 8

// ensureRBACPolicy creates or reconciles the bootstrap roles and bindings,
// the set upstream's rbac/bootstrap-roles hook ensures. The objects are
// independent of each other, so they are reconciled concurrently.
func ensureRBACPolicy(ctx context.Context, client kubernetes.Interface) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, rbacWorkers)
	)
	run := func(what string, fn func() error) {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := retry.OnError(retry.DefaultBackoff, retryable, fn); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", what, err))
				mu.Unlock()
			}
		})
	}
	rbac := client.RbacV1()
	for _, r := range append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...) {
		o := reconciliation.ReconcileRoleOptions{
			Role:    reconciliation.ClusterRoleRuleOwner{ClusterRole: &r},
			Client:  reconciliation.ClusterRoleModifier{Client: rbac.ClusterRoles()},
			Confirm: true,
		}
		run("clusterrole "+r.Name, func() error { _, err := o.Run(); return err })
	}
	for _, b := range append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...) {
		o := reconciliation.ReconcileRoleBindingOptions{
			RoleBinding: reconciliation.ClusterRoleBindingAdapter{ClusterRoleBinding: &b},
			Client:      reconciliation.ClusterRoleBindingClientAdapter{Client: rbac.ClusterRoleBindings()},
			Confirm:     true,
		}
		run("clusterrolebinding "+b.Name, func() error { _, err := o.Run(); return err })
	}
	for ns, roles := range bootstrappolicy.NamespaceRoles() {
		for _, r := range roles {
			o := reconciliation.ReconcileRoleOptions{
				Role:    reconciliation.RoleRuleOwner{Role: &r},
				Client:  reconciliation.RoleModifier{Client: rbac, NamespaceClient: client.CoreV1().Namespaces()},
				Confirm: true,
			}
			run("role "+ns+"/"+r.Name, func() error { _, err := o.Run(); return err })
		}
	}
	for ns, bindings := range bootstrappolicy.NamespaceRoleBindings() {
		for _, b := range bindings {
			o := reconciliation.ReconcileRoleBindingOptions{
				RoleBinding: reconciliation.RoleBindingAdapter{RoleBinding: &b},
				Client:      reconciliation.RoleBindingClientAdapter{Client: rbac, NamespaceClient: client.CoreV1().Namespaces()},
				Confirm:     true,
			}
			run("rolebinding "+ns+"/"+b.Name, func() error { _, err := o.Run(); return err })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ensurePriorityClasses creates the system PriorityClasses that are
// missing, as upstream's scheduling/bootstrap-system-priority-classes hook.
func ensurePriorityClasses(ctx context.Context, client kubernetes.Interface) error {
	pcs := client.SchedulingV1().PriorityClasses()
	for _, pc := range schedulingapiv1.SystemPriorityClasses() {
		_, err := pcs.Get(ctx, pc.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = pcs.Create(ctx, pc, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				err = nil
			}
		}
		if err != nil {
			return fmt.Errorf("PriorityClass %s: %w", pc.Name, err)
		}
	}
	return nil
}
