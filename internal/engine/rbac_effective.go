package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/auth/rbac/validation"

	"oplab.dev/oplab/internal/operator/install"
)

// serviceAccount names the subject whose permissions are judged.
type serviceAccount struct{ namespace, name string }

func (s serviceAccount) String() string { return "ServiceAccount " + s.namespace + "/" + s.name }

// grant is what one binding gives a subject: rules, cluster-wide
// (namespace "") or in one namespace.
type grant struct {
	binding   string // "ClusterRoleBinding x" or "RoleBinding ns/x"
	role      string // "ClusterRole y" or "Role ns/y"
	namespace string
	rules     []rbacv1.PolicyRule
}

// permissions is a set of grants: cluster-wide rules, and rules per
// namespace.
type permissions struct {
	cluster    []rbacv1.PolicyRule
	namespaced map[string][]rbacv1.PolicyRule
}

// in returns the rules that hold in namespace ns ("" for cluster-wide
// only).
func (p permissions) in(ns string) []rbacv1.PolicyRule {
	if ns == "" {
		return p.cluster
	}
	return append(slices.Clone(p.cluster), p.namespaced[ns]...)
}

// everyServiceAccount is what the API server's bootstrap policy (v1.36,
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy) grants every
// authenticated user and every service account: system:basic-user,
// system:discovery, system:public-info-viewer,
// system:service-account-issuer-discovery and, where ClusterTrustBundle is
// enabled, system:cluster-trust-bundle-discovery. The operator holds it
// without its chart, so it is no shortcut.
var everyServiceAccount = []rbacv1.PolicyRule{
	{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}, Verbs: []string{"create"}},
	{APIGroups: []string{"authentication.k8s.io"}, Resources: []string{"selfsubjectreviews"}, Verbs: []string{"create"}},
	{NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"}, Verbs: []string{"get"}},
	{NonResourceURLs: []string{"/.well-known/openid-configuration", "/.well-known/openid-configuration/", "/openid/v1/jwks", "/openid/v1/jwks/"}, Verbs: []string{"get"}},
	{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"clustertrustbundles"}, Verbs: []string{"get", "list", "watch"}},
}

// boundTo reports whether a binding's subject s, in a binding of namespace
// ns ("" for a ClusterRoleBinding), is the service account sa, one of its
// groups, or every authenticated user.
func boundTo(s rbacv1.Subject, ns string, sa serviceAccount) bool {
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		sns := s.Namespace
		if sns == "" {
			sns = ns
		}
		return s.Name == sa.name && sns == sa.namespace
	case rbacv1.UserKind:
		return s.Name == "system:serviceaccount:"+sa.namespace+":"+sa.name
	case rbacv1.GroupKind:
		return s.Name == "system:serviceaccounts" || s.Name == "system:serviceaccounts:"+sa.namespace || s.Name == "system:authenticated"
	}
	return false
}

// effectiveGrants lists every grant that the cluster's ClusterRoleBindings
// and RoleBindings (in every namespace) give sa, with the rules of
// aggregated ClusterRoles gathered from the roles they select.
func (e *Engine) effectiveGrants(ctx context.Context, sa serviceAccount) ([]grant, error) {
	crbs, err := e.cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list ClusterRoleBindings: %w", err)
	}
	rbs, err := e.cs.RbacV1().RoleBindings(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list RoleBindings: %w", err)
	}
	crs, err := e.cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list ClusterRoles: %w", err)
	}
	roles, err := e.cs.RbacV1().Roles(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Roles: %w", err)
	}
	rs := roleSet{cluster: map[string]*rbacv1.ClusterRole{}, ns: map[string][]rbacv1.PolicyRule{}}
	for i := range crs.Items {
		rs.cluster[crs.Items[i].Name] = &crs.Items[i]
	}
	for _, r := range roles.Items {
		rs.ns[r.Namespace+"/"+r.Name] = r.Rules
	}
	var out []grant
	for _, b := range crbs.Items {
		if slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool { return boundTo(s, "", sa) }) {
			out = append(out, grant{binding: "ClusterRoleBinding " + b.Name, role: "ClusterRole " + b.RoleRef.Name, rules: rs.rules(b.RoleRef, "")})
		}
	}
	for _, b := range rbs.Items {
		if slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool { return boundTo(s, b.Namespace, sa) }) {
			role := b.RoleRef.Kind + " " + b.RoleRef.Name
			if b.RoleRef.Kind == "Role" {
				role = "Role " + b.Namespace + "/" + b.RoleRef.Name
			}
			out = append(out, grant{binding: "RoleBinding " + b.Namespace + "/" + b.Name, role: role, namespace: b.Namespace, rules: rs.rules(b.RoleRef, b.Namespace)})
		}
	}
	return out, nil
}

// roleSet holds a cluster's roles by name.
type roleSet struct {
	cluster map[string]*rbacv1.ClusterRole
	ns      map[string][]rbacv1.PolicyRule // "namespace/name"
}

// rules of the role ref points at; a missing role grants nothing. An
// aggregated ClusterRole grants the rules of every ClusterRole its
// selectors match, whether or not the aggregation controller has copied
// them in yet.
func (rs roleSet) rules(ref rbacv1.RoleRef, ns string) []rbacv1.PolicyRule {
	if ref.Kind == "Role" {
		return rs.ns[ns+"/"+ref.Name]
	}
	cr := rs.cluster[ref.Name]
	if cr == nil {
		return nil
	}
	rules := slices.Clone(cr.Rules)
	if cr.AggregationRule == nil {
		return rules
	}
	for _, sel := range cr.AggregationRule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&sel)
		if err != nil {
			continue
		}
		for _, other := range rs.cluster {
			if other.Name != cr.Name && s.Matches(labels.Set(other.Labels)) {
				rules = append(rules, other.Rules...)
			}
		}
	}
	return rules
}

// beyond lists, per grant, the rules it gives beyond allowed (plus what
// every service account holds), in the words of kubectl auth can-i.
func beyond(grants []grant, allowed permissions) []string {
	var out []string
	for _, g := range grants {
		owner := append(allowed.in(g.namespace), everyServiceAccount...)
		ok, extra := validation.Covers(owner, g.rules)
		if ok {
			continue
		}
		where := "cluster-wide"
		if g.namespace != "" {
			where = "in namespace " + g.namespace
		}
		out = append(out, fmt.Sprintf("%s (%s) grants %s %s", g.binding, g.role, describeRules(extra), where))
	}
	slices.Sort(out)
	return out
}

// describeRules names broken-down rules as "verb resource.group", at most
// six of them.
func describeRules(rules []rbacv1.PolicyRule) string {
	var names []string
	for _, r := range rules {
		for _, v := range r.Verbs {
			for _, u := range r.NonResourceURLs {
				names = append(names, v+" "+u)
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					n := v + " " + qualified(res, g)
					if len(r.ResourceNames) > 0 {
						n += " " + strings.Join(r.ResourceNames, ",")
					}
					names = append(names, n)
				}
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) > 6 {
		return strings.Join(names[:6], ", ") + fmt.Sprintf(" and %d more", len(names)-6)
	}
	return strings.Join(names, ", ")
}

// permissionsOf gathers what rendered manifests grant sa.
func permissionsOf(ms []install.Manifest, sa serviceAccount) (permissions, error) {
	p := permissions{namespaced: map[string][]rbacv1.PolicyRule{}}
	rs := roleSet{cluster: map[string]*rbacv1.ClusterRole{}, ns: map[string][]rbacv1.PolicyRule{}}
	var crbs []rbacv1.ClusterRoleBinding
	var rbs []rbacv1.RoleBinding
	for _, m := range ms {
		var err error
		switch m.Kind {
		case "ClusterRole":
			var cr rbacv1.ClusterRole
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(m.Object, &cr)
			rs.cluster[cr.Name] = &cr
		case "Role":
			var r rbacv1.Role
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(m.Object, &r)
			rs.ns[r.Namespace+"/"+r.Name] = r.Rules
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(m.Object, &b)
			crbs = append(crbs, b)
		case "RoleBinding":
			var b rbacv1.RoleBinding
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(m.Object, &b)
			rbs = append(rbs, b)
		}
		if err != nil {
			return p, fmt.Errorf("decode the chart's %s %s: %w", m.Kind, m.Name, err)
		}
	}
	for _, b := range crbs {
		if slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool { return boundTo(s, "", sa) }) {
			p.cluster = append(p.cluster, rs.rules(b.RoleRef, "")...)
		}
	}
	for _, b := range rbs {
		if slices.ContainsFunc(b.Subjects, func(s rbacv1.Subject) bool { return boundTo(s, b.Namespace, sa) }) {
			p.namespaced[b.Namespace] = append(p.namespaced[b.Namespace], rs.rules(b.RoleRef, b.Namespace)...)
		}
	}
	if len(p.cluster) == 0 {
		return p, fmt.Errorf("the chart binds no ClusterRole to %s", sa)
	}
	return p, nil
}
