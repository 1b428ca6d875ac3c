package controller_test

import (
	"context"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pgv1 "oplab.dev/oplab/api/v1"
)

// serviceAccountConfig makes a ServiceAccount bound to a copy of the
// generated ClusterRole and returns a client config that authenticates
// with a token minted for it, so the operator runs with exactly the
// permissions the chart gives it.
func (e *env) serviceAccountConfig(t testing.TB, ns string) (*rest.Config, *rbacv1.ClusterRole) {
	t.Helper()
	ctx := context.Background()
	var role rbacv1.ClusterRole
	readYAML(t, rolePath, &role)
	role.Name = "pg-operator-" + ns
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pg-operator"}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa.Name}},
	}
	for _, o := range []client.Object{&role, sa, binding} {
		if err := e.cl.Create(ctx, o); err != nil {
			t.Fatalf("create %T: %v", o, err)
		}
	}
	tr, err := e.cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("mint token: %v", err)
	}
	cfg := rest.AnonymousClientConfig(e.cfg)
	cfg.BearerToken = tr.Status.Token
	return cfg, &role
}

func testForbidden(t *testing.T, e *env, ns string) {
	ctx := context.Background()
	cfg, role := e.serviceAccountConfig(t, ns)
	logs := e.operator(t, cfg, ns)
	pgc := cluster(ns, "db", 1)
	if err := e.cl.Create(ctx, pgc); err != nil {
		t.Fatal(err)
	}
	// The generated role is enough to run a cluster.
	pgc = e.waitReady(t, ns, "db", 1, 90*time.Second)

	// Take away the right to update StatefulSets, then ask for a change
	// that needs it.
	saved := role.DeepCopy()
	for i, r := range role.Rules {
		if len(r.APIGroups) == 1 && r.APIGroups[0] == "apps" {
			var verbs []string
			for _, v := range r.Verbs {
				if v != "update" {
					verbs = append(verbs, v)
				}
			}
			role.Rules[i].Verbs = verbs
		}
	}
	if err := e.cl.Update(ctx, role); err != nil {
		t.Fatal(err)
	}
	e.scale(t, pgc, 2)
	c := e.waitCondition(t, ns, "db", pgv1.ConditionReady, metav1.ConditionFalse, pgv1.ReasonReconcileError, 60*time.Second)
	if !strings.Contains(c.Message, "forbidden") || !strings.Contains(c.Message, "statefulsets") {
		t.Errorf("Ready message %q does not carry the Forbidden error", c.Message)
	}
	e.waitFor(t, 10*time.Second, "Forbidden in the operator log", func() (bool, string) {
		return strings.Contains(logs.String(), "forbidden"), "no line with forbidden"
	})

	// Give it back: the cluster recovers within seconds, not minutes.
	time.Sleep(15 * time.Second) // let the backoff grow to its cap
	saved.ResourceVersion = role.ResourceVersion
	if err := e.cl.Update(ctx, saved); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	e.waitReady(t, ns, "db", 2, 30*time.Second)
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("recovery after the fix took %s, want seconds (backoff is capped)", took)
	} else {
		t.Logf("recovered %s after the role was restored", took.Round(time.Millisecond))
	}
}

func testQuota(t *testing.T, e *env, ns string) {
	ctx := context.Background()
	e.operator(t, e.cfg, ns)
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pods"},
		Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("1")}},
	}
	if err := e.cl.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, 30*time.Second, "quota enforced", func() (bool, string) {
		if err := e.cl.Get(ctx, client.ObjectKeyFromObject(quota), quota); err != nil {
			return false, err.Error()
		}
		_, ok := quota.Status.Hard[corev1.ResourcePods]
		return ok, "quota status not computed"
	})
	pgc := cluster(ns, "db", 1)
	if err := e.cl.Create(ctx, pgc); err != nil {
		t.Fatal(err)
	}
	pgc = e.waitReady(t, ns, "db", 1, 90*time.Second)
	e.scale(t, pgc, 3)
	c := e.waitCondition(t, ns, "db", pgv1.ConditionProgressing, metav1.ConditionFalse, pgv1.ReasonQuotaExceeded, 60*time.Second)
	if !strings.Contains(c.Message, "exceeded quota") || !strings.Contains(c.Message, "1 of 3") {
		t.Errorf("Progressing message %q: want the quota error and the pod counts", c.Message)
	}
	patch := client.MergeFrom(quota.DeepCopy())
	quota.Spec.Hard[corev1.ResourcePods] = resource.MustParse("10")
	if err := e.cl.Patch(ctx, quota, patch); err != nil {
		t.Fatal(err)
	}
	e.waitReady(t, ns, "db", 3, 90*time.Second)
}
