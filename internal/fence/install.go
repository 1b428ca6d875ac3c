package fence

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// fieldManager owns the fields of the fence's objects.
const fieldManager = "oplab-fence"

// enforceTimeout bounds the wait for the API server to enforce the
// policies; it takes a few hundred milliseconds.
const enforceTimeout = time.Minute

// Install puts the fence in the cluster admin reaches, with admin's
// rights: it applies the objects (server-side apply, so it is idempotent
// and a second run repairs what changed), deletes the cluster's bootstrap
// tokens, and returns once the API server enforces every policy, so no
// request of the learner's comes before them.
func Install(ctx context.Context, admin *rest.Config) error {
	objs, err := Objects()
	if err != nil {
		return err
	}
	// Thirty objects and the probes: client-go's default limit (5 a
	// second) would make that seconds.
	admin = rest.CopyConfig(admin)
	admin.QPS, admin.Burst = 100, 200
	dyn, err := dynamic.NewForConfig(admin)
	if err != nil {
		return fmt.Errorf("install the fence: %w", err)
	}
	for _, wave := range waves(objs) {
		if err := applyAll(ctx, dyn, wave); err != nil {
			return err
		}
	}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return fmt.Errorf("install the fence: %w", err)
	}
	if err := deleteBootstrapTokens(ctx, cs); err != nil {
		return err
	}
	return waitEnforced(ctx, admin)
}

// waves orders the objects for applying: the learner's namespace; the
// rest of the identity and the policies no probe can see enforced; then
// the probed policies. The objects of a wave are applied at once, and a
// wave after the one before it, so when the probed policies are enforced,
// the API server has taken the others too (it reads policies in the order
// they were written).
func waves(objs []*unstructured.Unstructured) [][]*unstructured.Unstructured {
	probed := map[string]bool{}
	for _, p := range probes() {
		probed[p.policy] = true
	}
	out := make([][]*unstructured.Unstructured, 3)
	for _, o := range objs {
		switch {
		case o.GetKind() == "Namespace":
			out[0] = append(out[0], o)
		case strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") && probed[o.GetName()]:
			out[2] = append(out[2], o)
		default:
			out[1] = append(out[1], o)
		}
	}
	return out
}

// applyAll applies objs at once with server-side apply.
func applyAll(ctx context.Context, dyn dynamic.Interface, objs []*unstructured.Unstructured) error {
	errs := make([]error, len(objs))
	var wg sync.WaitGroup
	for i, o := range objs {
		wg.Go(func() {
			r, ok := resources[o.GetKind()]
			if !ok {
				errs[i] = fmt.Errorf("install the fence: no resource known for kind %s", o.GetKind())
				return
			}
			ri := dynamic.ResourceInterface(dyn.Resource(r.gvr))
			if r.namespaced {
				ri = dyn.Resource(r.gvr).Namespace(o.GetNamespace())
			}
			if _, err := ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: fieldManager, Force: true}); err != nil {
				errs[i] = fmt.Errorf("install the fence: apply %s %s: %w", o.GetKind(), o.GetName(), err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// deleteBootstrapTokens deletes the cluster's bootstrap tokens (kind's
// kubeadm leaves the one its node joined with, and its value is the same in
// every kind cluster). With one, anyone may ask for a node's client
// certificate, which the controller-manager approves: a node is trusted.
// No node joins a cluster after it was made.
func deleteBootstrapTokens(ctx context.Context, cs kubernetes.Interface) error {
	list, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{FieldSelector: "type=" + string(corev1.SecretTypeBootstrapToken)})
	if err != nil {
		return fmt.Errorf("install the fence: list bootstrap tokens: %w", err)
	}
	for _, s := range list.Items {
		if err := cs.CoreV1().Secrets(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("install the fence: delete bootstrap token %s: %w", s.Name, err)
		}
	}
	return nil
}

// waitEnforced polls the probes, as the learner (admin impersonating it:
// an impersonated request is untrusted too), until each is refused by its
// policy.
func waitEnforced(ctx context.Context, admin *rest.Config) error {
	cfg := rest.CopyConfig(admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: User}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c := clients{cs: cs, dyn: dyn}
	pending := probes()
	var last error
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, enforceTimeout, true, func(ctx context.Context) (bool, error) {
		var left []probe
		for _, p := range pending {
			if err := refusedBy(p.policy, p.try(ctx, c)); err != nil {
				left, last = append(left, p), err
			}
		}
		pending = left
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("install the fence: the API server does not enforce policy %s: %w (last: %v)", pending[0].policy, err, last)
	}
	return nil
}

// refusedBy returns nil when err is the refusal of policy, and otherwise
// what happened instead.
func refusedBy(policy string, err error) error {
	switch {
	case err == nil:
		return errors.New("the probe was allowed")
	case !strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+policy+"'"):
		return fmt.Errorf("the probe was not refused by %s: %w", policy, err)
	}
	return nil
}
