package fence

import (
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/yaml"

	"oplab.dev/oplab/charts"
)

// policies returns the fence's policies and bindings, typed, in order.
func policies(t *testing.T) ([]admissionv1.ValidatingAdmissionPolicy, map[string]admissionv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	var list []admissionv1.ValidatingAdmissionPolicy
	bindings := map[string]admissionv1.ValidatingAdmissionPolicyBinding{}
	for _, o := range objs {
		switch o.GetKind() {
		case "ValidatingAdmissionPolicy":
			var p admissionv1.ValidatingAdmissionPolicy
			convert(t, o, &p)
			list = append(list, p)
		case "ValidatingAdmissionPolicyBinding":
			var b admissionv1.ValidatingAdmissionPolicyBinding
			convert(t, o, &b)
			bindings[b.Name] = b
		}
	}
	return list, bindings
}

func convert(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true); err != nil {
		t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
	}
}

// learnerRole returns the learner's ClusterRole.
func learnerRole(t *testing.T) rbacv1.ClusterRole {
	t.Helper()
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "ClusterRole" {
			var r rbacv1.ClusterRole
			convert(t, o, &r)
			return r
		}
	}
	t.Fatal("no ClusterRole among the fence's objects")
	return rbacv1.ClusterRole{}
}

// Every object is the fence's, of a kind Install knows, and every manifest
// file is read.
func TestObjects(t *testing.T) {
	objs, err := Objects()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := fs.Glob(manifests, "manifests/*.yaml")
	seen := map[string]bool{}
	for _, o := range objs {
		if o.GetLabels()[Label] != "true" {
			t.Errorf("%s %s: got labels %v, want %s=true", o.GetKind(), o.GetName(), o.GetLabels(), Label)
		}
		if _, ok := resources[o.GetKind()]; !ok {
			t.Errorf("%s %s: no resource known for its kind", o.GetKind(), o.GetName())
		}
		key := o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
		if seen[key] {
			t.Errorf("%s: twice", key)
		}
		seen[key] = true
	}
	ps, _ := policies(t)
	if got, want := len(ps)+1, len(files); got != want {
		t.Errorf("got %d policies and the identity, want one per manifest file (%d)", got-1, want)
	}
}

// The fence is these policies, each named for what it guards
// (docs/security.md, section 3): one gone from the manifests is a wall
// gone, and one added is a wall this list, and its probe, must name.
var wantPolicies = []string{
	"oplab-crds",
	"oplab-endpointslices",
	"oplab-events",
	"oplab-fence",
	"oplab-kwok",
	"oplab-namespaces",
	"oplab-owners",
	"oplab-pods",
	"oplab-proxy",
	"oplab-simulated-servers",
	"oplab-status",
	"oplab-storage",
}

// The fence holds exactly wantPolicies, and exactly their bindings. Each
// policy denies with a binding of its own, fails closed, applies to
// untrusted identities only, and explains every refusal in one line that
// starts with "oplab:".
func TestPolicies(t *testing.T) {
	ps, bindings := policies(t)
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, wantPolicies) {
		t.Errorf("got policies %q, want exactly %q", names, wantPolicies)
	}
	bound := slices.Sorted(maps.Keys(bindings))
	if !slices.Equal(bound, wantPolicies) {
		t.Errorf("got bindings %q, want exactly one for each of %q", bound, wantPolicies)
	}
	for _, p := range ps {
		t.Run(p.Name, func(t *testing.T) {
			if !strings.HasPrefix(p.Name, "oplab-") {
				t.Errorf("got name %q, want it to start with oplab-", p.Name)
			}
			b, ok := bindings[p.Name]
			if !ok {
				t.Fatalf("no binding named %s", p.Name)
			}
			if b.Spec.PolicyName != p.Name || !slices.Equal(b.Spec.ValidationActions, []admissionv1.ValidationAction{admissionv1.Deny}) ||
				b.Spec.ParamRef != nil || b.Spec.MatchResources != nil {
				t.Errorf("got binding %+v, want it to deny by %s, everywhere", b.Spec, p.Name)
			}
			if fp := p.Spec.FailurePolicy; fp == nil || *fp != admissionv1.Fail {
				t.Errorf("got failurePolicy %v, want Fail", fp)
			}
			if c := p.Spec.MatchConditions; len(c) == 0 || c[0].Name != untrustedCondition || !strings.Contains(c[0].Expression, "system:masters") {
				t.Errorf("got match conditions %+v, want %q first", c, untrustedCondition)
			}
			if len(p.Spec.Validations) == 0 {
				t.Error("got no validations")
			}
			for i, v := range p.Spec.Validations {
				msg := v.Message
				if v.MessageExpression != "" {
					msg = v.MessageExpression
				}
				if !strings.Contains(msg, "oplab: ") || strings.Contains(msg, "\n") || !strings.Contains(msg, " not ") {
					t.Errorf("validation %d: got message %q, want one line saying what is not allowed, starting with oplab:", i, msg)
				}
				if v.Reason == nil || *v.Reason != "Forbidden" {
					t.Errorf("validation %d: got reason %v, want Forbidden (403, as RBAC's refusals)", i, v.Reason)
				}
			}
		})
	}
}

// Install waits for the probes; a policy without one is trusted to be
// enforced because one applied after it is.
func TestLastPolicyIsProbed(t *testing.T) {
	ps, _ := policies(t)
	probed := map[string]bool{}
	for _, p := range probes() {
		if !slices.ContainsFunc(ps, func(q admissionv1.ValidatingAdmissionPolicy) bool { return q.Name == p.policy }) {
			t.Errorf("probe of %s: no such policy", p.policy)
		}
		probed[p.policy] = true
	}
	if last := ps[len(ps)-1].Name; !probed[last] {
		t.Errorf("the last policy applied, %s, has no probe", last)
	}
	if len(probed) < len(ps)-2 {
		t.Errorf("got %d of %d policies probed, want all but those behind RBAC (oplab-kwok, oplab-proxy)", len(probed), len(ps))
	}
}

// The learner's role leaves out what reaches the node or escalates: no
// wildcard group or verb, no escalate, bind, approve or sign, no proxies
// or kubelet subresources, impersonation of the operators' accounts only
// (the reference's and Zalando's, for kubectl auth can-i --as).
func TestLearnerRoleLeavesOut(t *testing.T) {
	r := learnerRole(t)
	for i, rule := range r.Rules {
		if slices.Contains(rule.APIGroups, "*") {
			t.Errorf("rule %d: got apiGroups %v, want no wildcard (it would take in the core group's proxies)", i, rule.APIGroups)
		}
		for _, v := range rule.Verbs {
			if slices.Contains([]string{"*", "escalate", "bind", "approve", "sign"}, v) {
				t.Errorf("rule %d: got verb %q", i, v)
			}
			if v == "impersonate" && (!slices.Equal(rule.Resources, []string{"serviceaccounts"}) || !slices.Equal(rule.ResourceNames, []string{"pg-operator", "postgres-operator"})) {
				t.Errorf("rule %d: got impersonate on %v %v, want serviceaccounts pg-operator and postgres-operator only", i, rule.Resources, rule.ResourceNames)
			}
		}
		for _, res := range rule.Resources {
			if slices.Contains(rule.APIGroups, "") && (res == "*" || strings.HasSuffix(res, "/proxy") || strings.HasPrefix(res, "nodes/") && res != "nodes/status") {
				t.Errorf("rule %d: got core resource %q", i, res)
			}
			if slices.Contains(rule.APIGroups, "certificates.k8s.io") && slices.Contains(rule.Verbs, "create") &&
				(res == "*" || strings.Contains(res, "/") || res == "signers") {
				t.Errorf("rule %d: got certificates.k8s.io resource %q writable (approval, signing or a node's certificate)", i, res)
			}
		}
		if len(rule.NonResourceURLs) > 0 {
			t.Errorf("rule %d: got non-resource URLs %v", i, rule.NonResourceURLs)
		}
	}
}

// Escalation prevention lets a learner write into a role only rules they
// hold: to repair the operator's ClusterRole (the rbac lab), they must hold
// every rule the chart gives it.
func TestLearnerRoleCoversTheOperators(t *testing.T) {
	data, err := fs.ReadFile(charts.PGOperator(), "files/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var op rbacv1.ClusterRole
	if err := yaml.Unmarshal(data, &op); err != nil {
		t.Fatal(err)
	}
	if ok, missing := validation.Covers(learnerRole(t).Rules, op.Rules); !ok {
		t.Errorf("the learner's role does not hold the operator's rules %v", missing)
	}
}

// The trusted identities are named once, in trusted.cel.
func TestTrustedExpression(t *testing.T) {
	got, err := trustedExpression()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"system:masters", "kubeadm:cluster-admins", "system:nodes", "system:kube-controller-manager", "kube-system", "local-path-storage", "oplab-system", "authentication.kubernetes.io/credential-id"} {
		if !strings.Contains(got, want) {
			t.Errorf("trusted expression %q does not name %q", got, want)
		}
	}
	if strings.Contains(got, "//") || strings.Contains(got, Namespace) {
		t.Errorf("got %q, want no comments and not the learner's namespace", got)
	}
}
