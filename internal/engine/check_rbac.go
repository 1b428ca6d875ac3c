package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/component-helpers/auth/rbac/validation"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/operator/install"
)

// leastPrivilege judges the ServiceAccount's effective permissions, not one
// role's text: the role must grant every needed verb, and nothing that any
// binding gives the ServiceAccount (itself, its groups, every authenticated
// user; through any role, aggregated or not) may go beyond what it is meant
// to have. A wildcard, a cluster-admin binding, a RoleBinding to `edit` in
// one namespace: each is a permission beyond the need, and the reason names
// the binding and the rules.
func (e *Engine) leastPrivilege(ctx context.Context, p *lab.RoleLeastPrivilege) (bool, string) {
	r := newRoleRef(p.RoleKind, p.Role, p.Namespace)
	rules, err := e.rules(ctx, r)
	if err != nil {
		return false, fmt.Sprintf("cannot read %s: %v", r, err)
	}
	needs, allowed, err := e.intendedPermissions(p)
	if err != nil {
		return false, err.Error()
	}
	if miss := missingGrants(rules, needs); len(miss) > 0 {
		return false, fmt.Sprintf("%s does not grant %s", r, strings.Join(miss, ", "))
	}
	sa := subjectOf(p)
	grants, err := e.effectiveGrants(ctx, sa)
	if err != nil {
		return false, fmt.Sprintf("cannot read the permissions of %s: %v", sa, err)
	}
	if extra := beyond(grants, allowed); len(extra) > 0 {
		return false, fmt.Sprintf("%s holds more than it needs: %s; least privilege allows nothing beyond its chart, wildcard or not", sa, strings.Join(extra, "; "))
	}
	return true, fmt.Sprintf("%s grants what the operator needs, and no binding gives %s more", r, sa)
}

// subjectOf is the ServiceAccount p judges.
func subjectOf(p *lab.RoleLeastPrivilege) serviceAccount {
	if ns, name, ok := strings.Cut(p.ServiceAccount, "/"); ok {
		return serviceAccount{ns, name}
	}
	return serviceAccount{install.Namespace, install.ServiceAccount}
}

// intendedPermissions returns what the role must grant (with chartRules,
// the rules of the lab's operator's chart's ClusterRole of the same name;
// and needs) and what the ServiceAccount may hold in all (everything the
// chart grants it with chartRules, and needs, cluster-wide).
func (e *Engine) intendedPermissions(p *lab.RoleLeastPrivilege) ([]rbacv1.PolicyRule, permissions, error) {
	var needs []rbacv1.PolicyRule
	for _, n := range p.Needs {
		needs = append(needs, rbacv1.PolicyRule{APIGroups: n.APIGroups, Resources: n.Resources, Verbs: n.Verbs})
	}
	allowed := permissions{namespaced: map[string][]rbacv1.PolicyRule{}}
	if p.ChartRules {
		chart, found, err := e.chartRoleRules(p.Role)
		if err != nil {
			return nil, allowed, err
		}
		if !found || p.RoleKind == "Role" {
			return nil, allowed, fmt.Errorf("the operator's chart has no ClusterRole %s to compare with", p.Role)
		}
		needs = append(needs, chart...)
		cp, err := e.chartGrants(subjectOf(p))
		if err != nil {
			return nil, allowed, fmt.Errorf("what the chart grants: %w", err)
		}
		allowed.cluster = slices.Clone(cp.cluster)
		for ns, rules := range cp.namespaced {
			allowed.namespaced[ns] = slices.Clone(rules)
		}
	}
	allowed.cluster = append(allowed.cluster, needs...)
	return needs, allowed, nil
}

// missingGrants lists the needed permissions the rules do not grant, in
// the words of kubectl auth can-i.
func missingGrants(rules, needs []rbacv1.PolicyRule) []string {
	var plain []rbacv1.PolicyRule // a rule limited to resourceNames grants no list or create
	for _, r := range rules {
		if len(r.ResourceNames) == 0 {
			plain = append(plain, r)
		}
	}
	if ok, miss := validation.Covers(plain, needs); !ok {
		return strings.Split(describeRules(miss), ", ")
	}
	return nil
}

func qualified(resource, group string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}
