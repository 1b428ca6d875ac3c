package engine

import (
	"context"
	"fmt"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"oplab.dev/oplab/internal/lab"
)

// roleRef names a ClusterRole or a Role.
type roleRef struct {
	kind, name, namespace string
}

func (r roleRef) String() string {
	if r.kind == "Role" {
		return fmt.Sprintf("Role %s/%s", r.namespace, r.name)
	}
	return "ClusterRole " + r.name
}

func newRoleRef(kind, name, namespace string) roleRef {
	if kind == "" {
		kind = "ClusterRole"
	}
	return roleRef{kind, name, namespace}
}

// rules reads the rules of the role.
func (e *Engine) rules(ctx context.Context, r roleRef) ([]rbacv1.PolicyRule, error) {
	if r.kind == "Role" {
		role, err := e.cs.RbacV1().Roles(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get %s: %w", r, err)
		}
		return role.Rules, nil
	}
	role, err := e.cs.RbacV1().ClusterRoles().Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", r, err)
	}
	return role.Rules, nil
}

// updateRules replaces the role's rules with edit(rules).
func (e *Engine) updateRules(ctx context.Context, r roleRef, edit func([]rbacv1.PolicyRule) []rbacv1.PolicyRule) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if r.kind == "Role" {
			role, err := e.cs.RbacV1().Roles(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			role.Rules = edit(role.Rules)
			_, err = e.cs.RbacV1().Roles(r.namespace).Update(ctx, role, metav1.UpdateOptions{})
			return err
		}
		role, err := e.cs.RbacV1().ClusterRoles().Get(ctx, r.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		role.Rules = edit(role.Rules)
		_, err = e.cs.RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("update %s: %w", r, err)
	}
	return nil
}

func (e *Engine) removeRoleVerbs(ctx context.Context, p *lab.RemoveRoleVerbs) error {
	r := newRoleRef(p.RoleKind, p.Role, p.Namespace)
	return e.updateRules(ctx, r, func(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
		return withoutVerbs(rules, p.Resources, p.Verbs)
	})
}

// withoutVerbs removes verbs on resources from rules. A rule naming other
// resources too is split, so they keep their verbs; a rule left without
// verbs is dropped. Removing what is not granted changes nothing.
func withoutVerbs(rules []rbacv1.PolicyRule, resources, verbs []string) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, rule := range rules {
		var hit, rest []string
		for _, res := range rule.Resources {
			if slices.Contains(resources, res) {
				hit = append(hit, res)
			} else {
				rest = append(rest, res)
			}
		}
		kept := slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return slices.Contains(verbs, v) })
		if len(hit) == 0 || len(kept) == len(rule.Verbs) {
			out = append(out, rule)
			continue
		}
		if len(rest) > 0 {
			r := *rule.DeepCopy()
			r.Resources = rest
			out = append(out, r)
		}
		if len(kept) > 0 {
			r := *rule.DeepCopy()
			r.Resources, r.Verbs = hit, kept
			out = append(out, r)
		}
	}
	return out
}

// restoreRole undoes removeRoleVerbs: a ClusterRole of the lab's
// operator's chart gets the chart's rules back; another role gets the
// removed verbs back.
func (e *Engine) restoreRole(ctx context.Context, p *lab.RemoveRoleVerbs) error {
	r := newRoleRef(p.RoleKind, p.Role, p.Namespace)
	if r.kind == "ClusterRole" {
		want, found, err := e.chartRoleRules(r.name)
		if err != nil {
			return err
		}
		if found {
			return e.updateRules(ctx, r, func([]rbacv1.PolicyRule) []rbacv1.PolicyRule { return want })
		}
	}
	return e.updateRules(ctx, r, func(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
		groups := []string{}
		for _, rule := range rules {
			for _, res := range rule.Resources {
				if slices.Contains(p.Resources, res) {
					groups = append(groups, rule.APIGroups...)
				}
			}
		}
		slices.Sort(groups)
		groups = slices.Compact(groups)
		if len(groups) == 0 {
			groups = []string{""}
		}
		return append(rules, rbacv1.PolicyRule{APIGroups: groups, Resources: p.Resources, Verbs: p.Verbs})
	})
}
