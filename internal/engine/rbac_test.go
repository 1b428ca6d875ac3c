package engine

import (
	"reflect"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"oplab.dev/oplab/internal/lab"
)

func rule(groups, resources, verbs string) rbacv1.PolicyRule {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	g := split(groups)
	if groups == "core" {
		g = []string{""}
	}
	return rbacv1.PolicyRule{APIGroups: g, Resources: split(resources), Verbs: split(verbs)}
}

func TestWithoutVerbs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		rules     []rbacv1.PolicyRule
		resources []string
		verbs     []string
		want      []rbacv1.PolicyRule
	}{
		{
			name:      "removes the verb from the rule of the resource",
			rules:     []rbacv1.PolicyRule{rule("apps", "statefulsets", "create,get,update")},
			resources: []string{"statefulsets"}, verbs: []string{"update"},
			want: []rbacv1.PolicyRule{rule("apps", "statefulsets", "create,get")},
		},
		{
			name:      "splits a rule shared with another resource",
			rules:     []rbacv1.PolicyRule{rule("core", "configmaps,services", "get,update")},
			resources: []string{"services"}, verbs: []string{"update"},
			want: []rbacv1.PolicyRule{rule("core", "configmaps", "get,update"), rule("core", "services", "get")},
		},
		{
			name:      "drops a rule left without verbs",
			rules:     []rbacv1.PolicyRule{rule("core", "secrets", "get"), rule("core", "pods", "get")},
			resources: []string{"secrets"}, verbs: []string{"get"},
			want: []rbacv1.PolicyRule{rule("core", "pods", "get")},
		},
		{
			name:      "removing what is not granted changes nothing",
			rules:     []rbacv1.PolicyRule{rule("apps", "statefulsets", "get")},
			resources: []string{"statefulsets"}, verbs: []string{"patch"},
			want: []rbacv1.PolicyRule{rule("apps", "statefulsets", "get")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := withoutVerbs(tt.rules, tt.resources, tt.verbs)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			// Idempotent: a second removal changes nothing more.
			if again := withoutVerbs(got, tt.resources, tt.verbs); !reflect.DeepEqual(again, got) {
				t.Errorf("second removal: got %v, want %v", again, got)
			}
		})
	}
}

func TestWildcard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rules []rbacv1.PolicyRule
		want  string
	}{
		{[]rbacv1.PolicyRule{rule("apps", "statefulsets", "get")}, ""},
		{[]rbacv1.PolicyRule{rule("apps", "statefulsets", "*")}, "rule 1 has * in verbs"},
		{[]rbacv1.PolicyRule{rule("core", "pods", "get"), rule("apps", "*", "get")}, "rule 2 has * in resources"},
		{[]rbacv1.PolicyRule{rule("*", "pods", "get")}, "rule 1 has * in apiGroups"},
		{[]rbacv1.PolicyRule{rule("core", "pods/*", "get")}, "rule 1 has * in resources"},
	}
	for _, tt := range tests {
		if got := wildcard(tt.rules); got != tt.want {
			t.Errorf("wildcard(%v): got %q, want %q", tt.rules, got, tt.want)
		}
	}
}

func TestMissingGrants(t *testing.T) {
	t.Parallel()
	rules := []rbacv1.PolicyRule{rule("apps", "statefulsets", "get,create"), rule("core", "pods", "get,list")}
	needs := []lab.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "update"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "patch"}},
	}
	got := missingGrants(rules, needs)
	want := []string{"patch pods", "update statefulsets.apps"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	scoped := []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get"}, ResourceNames: []string{"one"}}}
	if got := missingGrants(scoped, needs[:1]); len(got) != 2 {
		t.Errorf("a rule limited to resourceNames: got missing %v, want get and update missing", got)
	}
}

// The rbac lab removes update on statefulsets: the chart must grant it, or
// the chaos does nothing.
func TestChartRulesGrantStatefulSetUpdate(t *testing.T) {
	t.Parallel()
	rules, err := chartRules()
	if err != nil {
		t.Fatal(err)
	}
	if !grants(rules, "apps", "statefulsets", "update") {
		t.Errorf("chart rules: got no update on statefulsets.apps, want it granted")
	}
	if w := wildcard(rules); w != "" {
		t.Errorf("chart rules: got %s, want no wildcard", w)
	}
}
