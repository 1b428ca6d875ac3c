package engine

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

func TestMissingGrants(t *testing.T) {
	t.Parallel()
	rules := []rbacv1.PolicyRule{rule("apps", "statefulsets", "get,create"), rule("core", "pods", "get,list")}
	needs := []rbacv1.PolicyRule{rule("apps", "statefulsets", "get,update"), rule("core", "pods", "list,patch")}
	got := missingGrants(rules, needs)
	want := []string{"patch pods", "update statefulsets.apps"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	scoped := []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get"}, ResourceNames: []string{"one"}}}
	if got := missingGrants(scoped, needs[:1]); len(got) != 2 {
		t.Errorf("a rule limited to resourceNames: got missing %v, want get and update missing", got)
	}
	if got := missingGrants([]rbacv1.PolicyRule{rule("*", "*", "*")}, needs); got != nil {
		t.Errorf("a wildcard role: got missing %v, want nothing missing (it is refused as extra instead)", got)
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
	if miss := missingGrants(rules, []rbacv1.PolicyRule{rule("apps", "statefulsets", "update")}); miss != nil {
		t.Errorf("chart rules: got %v missing, want update on statefulsets.apps granted", miss)
	}
}

var operatorSA = serviceAccount{"oplab-system", "pg-operator"}

func TestBoundTo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    rbacv1.Subject
		ns   string
		want bool
	}{
		{rbacv1.Subject{Kind: "ServiceAccount", Name: "pg-operator", Namespace: "oplab-system"}, "", true},
		{rbacv1.Subject{Kind: "ServiceAccount", Name: "pg-operator"}, "oplab-system", true},
		{rbacv1.Subject{Kind: "ServiceAccount", Name: "pg-operator"}, "default", false},
		{rbacv1.Subject{Kind: "ServiceAccount", Name: "other", Namespace: "oplab-system"}, "", false},
		{rbacv1.Subject{Kind: "User", Name: "system:serviceaccount:oplab-system:pg-operator"}, "", true},
		{rbacv1.Subject{Kind: "User", Name: "pg-operator"}, "", false},
		{rbacv1.Subject{Kind: "Group", Name: "system:serviceaccounts"}, "", true},
		{rbacv1.Subject{Kind: "Group", Name: "system:serviceaccounts:oplab-system"}, "", true},
		{rbacv1.Subject{Kind: "Group", Name: "system:serviceaccounts:default"}, "", false},
		{rbacv1.Subject{Kind: "Group", Name: "system:authenticated"}, "", true},
		{rbacv1.Subject{Kind: "Group", Name: "system:masters"}, "", false},
	}
	for _, tt := range tests {
		if got := boundTo(tt.s, tt.ns, operatorSA); got != tt.want {
			t.Errorf("boundTo(%+v in %q): got %v, want %v", tt.s, tt.ns, got, tt.want)
		}
	}
}

// What the chart grants: its ClusterRole cluster-wide, and the leader
// election Role in its own namespace only.
func TestChartPermissions(t *testing.T) {
	t.Parallel()
	p, err := chartPermissions()
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := chartRules()
	if miss := missingGrants(p.cluster, rules); miss != nil {
		t.Errorf("cluster-wide: got %v missing, want the chart's ClusterRole", miss)
	}
	lease := []rbacv1.PolicyRule{rule("coordination.k8s.io", "leases", "get,update")}
	if miss := missingGrants(p.in("oplab-system"), lease); miss != nil {
		t.Errorf("in oplab-system: got %v missing, want the leader election Role", miss)
	}
	if miss := missingGrants(p.in("default"), lease); miss == nil {
		t.Errorf("in default: got leases granted, want them granted in oplab-system only")
	}
}

func TestBeyond(t *testing.T) {
	t.Parallel()
	chart, err := chartPermissions()
	if err != nil {
		t.Fatal(err)
	}
	rules, _ := chartRules()
	tests := []struct {
		name   string
		grants []grant
		want   []string // substrings of the one line per offending binding
	}{
		{"the chart's own grants", []grant{
			{binding: "ClusterRoleBinding pg-operator", role: "ClusterRole pg-operator", rules: rules},
			{binding: "RoleBinding oplab-system/pg-operator-leader-election", role: "Role oplab-system/pg-operator-leader-election", namespace: "oplab-system", rules: chart.namespaced["oplab-system"]},
			{binding: "ClusterRoleBinding system:discovery", role: "ClusterRole system:discovery", rules: everyServiceAccount},
		}, nil},
		{"a wildcard role", []grant{
			{binding: "ClusterRoleBinding pg-operator", role: "ClusterRole pg-operator", rules: []rbacv1.PolicyRule{rule("*", "*", "*")}},
		}, []string{"ClusterRoleBinding pg-operator (ClusterRole pg-operator) grants * *.* cluster-wide"}},
		{"one verb too many, no wildcard", []grant{
			{binding: "ClusterRoleBinding pg-operator", role: "ClusterRole pg-operator", rules: append(slices.Clone(rules), rule("core", "secrets", "delete"))},
		}, []string{"grants delete secrets cluster-wide"}},
		{"the leader election role bound in another namespace", []grant{
			{binding: "RoleBinding default/x", role: "Role default/x", namespace: "default", rules: chart.namespaced["oplab-system"]},
		}, []string{"RoleBinding default/x (Role default/x) grants", "leases.coordination.k8s.io", "in namespace default"}},
		{"edit in one namespace", []grant{
			{binding: "RoleBinding default/e", role: "ClusterRole edit", namespace: "default", rules: []rbacv1.PolicyRule{rule("apps", "deployments", "create,delete")}},
			{binding: "ClusterRoleBinding pg-operator", role: "ClusterRole pg-operator", rules: rules},
		}, []string{"RoleBinding default/e (ClusterRole edit) grants create deployments.apps, delete deployments.apps in namespace default"}},
		{"a non-resource URL", []grant{
			{binding: "ClusterRoleBinding m", role: "ClusterRole m", rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}},
		}, []string{"grants get /metrics cluster-wide"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := beyond(tt.grants, chart)
			if len(tt.want) == 0 {
				if len(got) > 0 {
					t.Errorf("got %q, want nothing beyond the chart", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("got %q, want one offending binding", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got[0], w) {
					t.Errorf("got %q, want it to contain %q", got[0], w)
				}
			}
		})
	}
}

func TestAggregatedRules(t *testing.T) {
	t.Parallel()
	sel := metav1.LabelSelector{MatchLabels: map[string]string{"agg": "yes"}}
	rs := roleSet{cluster: map[string]*rbacv1.ClusterRole{
		"parent": {ObjectMeta: metav1.ObjectMeta{Name: "parent"}, AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{sel}}},
		"child":  {ObjectMeta: metav1.ObjectMeta{Name: "child", Labels: map[string]string{"agg": "yes"}}, Rules: []rbacv1.PolicyRule{rule("core", "secrets", "delete")}},
		"other":  {ObjectMeta: metav1.ObjectMeta{Name: "other"}, Rules: []rbacv1.PolicyRule{rule("core", "pods", "delete")}},
	}}
	got := rs.rules(rbacv1.RoleRef{Kind: "ClusterRole", Name: "parent"}, "")
	if want := []rbacv1.PolicyRule{rule("core", "secrets", "delete")}; !reflect.DeepEqual(got, want) {
		t.Errorf("aggregated role: got %v, want %v (its own rules not yet filled in)", got, want)
	}
	if got := rs.rules(rbacv1.RoleRef{Kind: "ClusterRole", Name: "missing"}, ""); got != nil {
		t.Errorf("missing role: got %v, want no rules", got)
	}
}
