package install

import (
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"oplab.dev/oplab/charts"
)

func renderChart(t *testing.T, vals map[string]any) map[string]Manifest {
	t.Helper()
	c, err := LoadChart(charts.PGOperator())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Render(c, ReleaseName, Namespace, vals)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Manifest{}
	for _, m := range ms {
		key := m.Kind + "/" + m.Namespace + "/" + m.Name
		if _, dup := out[key]; dup {
			t.Fatalf("rendered %s twice", key)
		}
		out[key] = m
	}
	return out
}

func TestChartEmbedsEveryFile(t *testing.T) {
	t.Parallel()
	for _, f := range []string{"Chart.yaml", "values.yaml", "templates/_helpers.tpl", "templates/deployment.yaml", "files/role.yaml"} {
		if _, err := fs.Stat(charts.PGOperator(), f); err != nil {
			t.Errorf("embedded chart lacks %s: %v", f, err)
		}
	}
}

func TestChartRenders(t *testing.T) {
	t.Parallel()
	roleRules := generatedRules(t)
	tests := []struct {
		name  string
		vals  map[string]any
		check func(t *testing.T, objs map[string]Manifest)
	}{
		{
			name: "defaults",
			vals: nil,
			check: func(t *testing.T, objs map[string]Manifest) {
				want := []string{
					"ServiceAccount/oplab-system/pg-operator",
					"ClusterRole//pg-operator",
					"ClusterRoleBinding//pg-operator",
					"Role/oplab-system/pg-operator-leader-election",
					"RoleBinding/oplab-system/pg-operator-leader-election",
					"Deployment/oplab-system/pg-operator",
					"Service/oplab-system/pg-operator-metrics",
				}
				got := keys(objs)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Fatalf("rendered %v, want %v", got, want)
				}
				if rules := field(objs["ClusterRole//pg-operator"].Object, "rules"); !reflect.DeepEqual(rules, roleRules) {
					t.Errorf("ClusterRole rules = %v, want controller-gen's %v", rules, roleRules)
				}
				crb := objs["ClusterRoleBinding//pg-operator"].Object
				if got := field(crb, "subjects", 0, "name"); got != "pg-operator" {
					t.Errorf("ClusterRoleBinding subject = %v, want pg-operator", got)
				}
				if got := field(crb, "subjects", 0, "namespace"); got != "oplab-system" {
					t.Errorf("ClusterRoleBinding subject namespace = %v, want oplab-system", got)
				}
				dep := objs["Deployment/oplab-system/pg-operator"].Object
				ctr := field(dep, "spec", "template", "spec", "containers", 0)
				if got := field(dep, "spec", "template", "spec", "serviceAccountName"); got != "pg-operator" {
					t.Errorf("serviceAccountName = %v, want pg-operator", got)
				}
				if got := field(ctr, "image"); got != "oplab.dev/pg-operator:0.1.0" {
					t.Errorf("image = %v, want oplab.dev/pg-operator:0.1.0 (the appVersion)", got)
				}
				args := strs(field(ctr, "args"))
				for _, a := range []string{"--leader-elect=true", "--metrics-bind-address=:8080", "--health-probe-bind-address=:8081", "--instance-mode=sql"} {
					if !slices.Contains(args, a) {
						t.Errorf("args %v lack %s", args, a)
					}
				}
				if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--watch-namespace") }) {
					t.Errorf("args %v name a watched namespace, want all namespaces", args)
				}
				if got := field(ctr, "readinessProbe", "httpGet", "path"); got != "/readyz" {
					t.Errorf("readiness probe path = %v, want /readyz", got)
				}
				if got := field(ctr, "livenessProbe", "httpGet", "path"); got != "/healthz" {
					t.Errorf("liveness probe path = %v, want /healthz", got)
				}
				if got := field(ctr, "resources", "limits", "memory"); got != "256Mi" {
					t.Errorf("memory limit = %v, want 256Mi", got)
				}
				svc := objs["Service/oplab-system/pg-operator-metrics"].Object
				if got := field(svc, "spec", "ports", 0, "port"); got != float64(8080) {
					t.Errorf("metrics port = %v, want 8080", got)
				}
				if got := field(svc, "spec", "selector"); !reflect.DeepEqual(got, field(dep, "spec", "selector", "matchLabels")) {
					t.Errorf("Service selector %v differs from the Deployment's %v", got, field(dep, "spec", "selector", "matchLabels"))
				}
			},
		},
		{
			name: "values",
			vals: map[string]any{
				"image":          map[string]any{"repository": "example.com/op", "tag": "v2"},
				"watchNamespace": "team-a",
				"leaderElect":    false,
				"instanceMode":   "simulated",
				"resources":      map[string]any{"limits": map[string]any{"memory": "1Gi"}},
			},
			check: func(t *testing.T, objs map[string]Manifest) {
				if _, ok := objs["ClusterRoleBinding//pg-operator"]; ok {
					t.Error("a ClusterRoleBinding is rendered while one namespace is watched")
				}
				rb, ok := objs["RoleBinding/team-a/pg-operator"]
				if !ok {
					t.Fatalf("no RoleBinding in the watched namespace; rendered %v", keys(objs))
				}
				if got := field(rb.Object, "roleRef", "kind"); got != "ClusterRole" {
					t.Errorf("RoleBinding refers to a %v, want the ClusterRole", got)
				}
				if _, ok := objs["Role/oplab-system/pg-operator-leader-election"]; ok {
					t.Error("leader-election Role rendered with leaderElect=false")
				}
				ctr := field(objs["Deployment/oplab-system/pg-operator"].Object, "spec", "template", "spec", "containers", 0)
				if got := field(ctr, "image"); got != "example.com/op:v2" {
					t.Errorf("image = %v, want example.com/op:v2", got)
				}
				args := strs(field(ctr, "args"))
				for _, a := range []string{"--leader-elect=false", "--instance-mode=simulated", "--watch-namespace=team-a"} {
					if !slices.Contains(args, a) {
						t.Errorf("args %v lack %s", args, a)
					}
				}
				if got := field(ctr, "resources", "limits", "memory"); got != "1Gi" {
					t.Errorf("memory limit = %v, want 1Gi", got)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.check(t, renderChart(t, tt.vals))
		})
	}
}

// generatedRules are the rules of the chart's copy of controller-gen's role.
func generatedRules(t *testing.T) any {
	t.Helper()
	b, err := fs.ReadFile(charts.PGOperator(), "files/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role map[string]any
	if err := yaml.Unmarshal(b, &role); err != nil {
		t.Fatal(err)
	}
	if role["rules"] == nil {
		t.Fatal("files/role.yaml has no rules")
	}
	return role["rules"]
}

func keys(objs map[string]Manifest) []string {
	var k []string
	for key := range objs {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

func strs(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, e := range l {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}
