package webapp

import "testing"

func TestErrorLine(t *testing.T) {
	const pgc = `apiVersion: databases.example.com/v1
kind: PostgresCluster
metadata:
  name: prod-db
spec:
  version: "15"
  replicas: three
`
	tests := []struct {
		name, yaml, msg string
		want            int
	}{
		{"yaml syntax", pgc, "error: error parsing STDIN: error converting YAML to JSON: yaml: line 3: mapping values are not allowed in this context", 3},
		{"invalid field", pgc, `The PostgresCluster "prod-db" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`, 7},
		{"missing field points at its parent", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {a: b}\n", `The ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`, 3},
		{"list index", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n    image: x\n  - name: b\n", `The Pod "p" is invalid: spec.containers[1].image: Required value`, 9},
		{"no place named", pgc, "error: the server doesn't have a resource type", 0},
		{"two documents", pgc + "---\n" + pgc, `spec.replicas: Invalid value: "string"`, 0},
	}
	for _, tt := range tests {
		if got := errorLine([]byte(tt.yaml), tt.msg); got != tt.want {
			t.Errorf("%s: got line %d, want %d", tt.name, got, tt.want)
		}
	}
}
