package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/lab"
)

// leastPrivilege passes when the role grants every needed verb, no rule of
// it uses "*", and no other binding gives the role's subjects a role with
// "*" (cluster-admin, say): a shortcut grants more than the operator needs.
func (e *Engine) leastPrivilege(ctx context.Context, p *lab.RoleLeastPrivilege) (bool, string) {
	r := newRoleRef(p.RoleKind, p.Role, p.Namespace)
	rules, err := e.rules(ctx, r)
	if err != nil {
		return false, fmt.Sprintf("cannot read %s: %v", r, err)
	}
	if why := wildcard(rules); why != "" {
		return false, fmt.Sprintf("%s %s: least privilege allows no wildcard", r, why)
	}
	needs := slices.Clone(p.Needs)
	if p.ChartRules {
		chart, err := chartRules()
		if err != nil {
			return false, err.Error()
		}
		for _, c := range chart {
			needs = append(needs, lab.PolicyRule{APIGroups: c.APIGroups, Resources: c.Resources, Verbs: c.Verbs})
		}
	}
	if miss := missingGrants(rules, needs); len(miss) > 0 {
		return false, fmt.Sprintf("%s does not grant %s", r, strings.Join(miss, ", "))
	}
	if why := e.broaderBindings(ctx, r); why != "" {
		return false, why
	}
	return true, fmt.Sprintf("%s grants what the operator needs and no wildcard", r)
}

// wildcard describes the first rule that uses "*", or returns "".
func wildcard(rules []rbacv1.PolicyRule) string {
	for i, r := range rules {
		for _, f := range []struct {
			name string
			vals []string
		}{{"verbs", r.Verbs}, {"resources", r.Resources}, {"apiGroups", r.APIGroups}, {"nonResourceURLs", r.NonResourceURLs}} {
			if slices.ContainsFunc(f.vals, func(v string) bool { return strings.Contains(v, "*") }) {
				return fmt.Sprintf("rule %d has * in %s", i+1, f.name)
			}
		}
	}
	return ""
}

// missingGrants lists the needed "verb group/resource" triples no rule
// grants, in the words of kubectl auth can-i.
func missingGrants(rules []rbacv1.PolicyRule, needs []lab.PolicyRule) []string {
	var miss []string
	for _, n := range needs {
		for _, g := range n.APIGroups {
			for _, res := range n.Resources {
				for _, v := range n.Verbs {
					if !grants(rules, g, res, v) {
						miss = append(miss, fmt.Sprintf("%s %s", v, qualified(res, g)))
					}
				}
			}
		}
	}
	slices.Sort(miss)
	return slices.Compact(miss)
}

func qualified(resource, group string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// grants reports whether a rule (without resourceNames) allows verb on
// group/resource.
func grants(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	for _, r := range rules {
		if len(r.ResourceNames) > 0 {
			continue
		}
		if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}

// broaderBindings looks for bindings that give the subjects bound to r a
// role with a wildcard, and describes the first, or returns "".
func (e *Engine) broaderBindings(ctx context.Context, r roleRef) string {
	crbs, err := e.cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Sprintf("cannot list ClusterRoleBindings: %v", err)
	}
	rbs, err := e.cs.RbacV1().RoleBindings(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Sprintf("cannot list RoleBindings: %v", err)
	}
	type binding struct {
		kind, name, ns string
		ref            rbacv1.RoleRef
		subjects       []rbacv1.Subject
	}
	var all []binding
	for _, b := range crbs.Items {
		all = append(all, binding{"ClusterRoleBinding", b.Name, "", b.RoleRef, b.Subjects})
	}
	for _, b := range rbs.Items {
		all = append(all, binding{"RoleBinding", b.Name, b.Namespace, b.RoleRef, b.Subjects})
	}
	// The subjects the role is meant for.
	var subjects []rbacv1.Subject
	for _, b := range all {
		if b.ref.Kind == r.kind && b.ref.Name == r.name && (r.kind == "ClusterRole" || b.ns == r.namespace) {
			subjects = append(subjects, b.subjects...)
		}
	}
	for _, b := range all {
		if b.ref.Kind == r.kind && b.ref.Name == r.name || !sharesSubject(b.subjects, subjects) {
			continue
		}
		ref := newRoleRef(b.ref.Kind, b.ref.Name, b.ns)
		rules, err := e.rules(ctx, ref)
		if err != nil {
			continue // a binding to a missing role grants nothing
		}
		if why := wildcard(rules); why != "" {
			return fmt.Sprintf("%s %s also binds the operator to %s, whose %s: least privilege allows no wildcard", b.kind, b.name, ref, why)
		}
	}
	return ""
}

func sharesSubject(a, b []rbacv1.Subject) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Kind == y.Kind && x.Name == y.Name && x.Namespace == y.Namespace {
				return true
			}
		}
	}
	return false
}
