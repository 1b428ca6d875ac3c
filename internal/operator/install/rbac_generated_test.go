package install

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"oplab.dev/oplab/charts"
)

// TestChartRulesAreGenerated fails when the chart's copy of the operator's
// RBAC rules differs from controller-gen's output: run make generate.
func TestChartRulesAreGenerated(t *testing.T) {
	t.Parallel()
	generated, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatalf("read controller-gen's role: %v (run make generate)", err)
	}
	chart, err := fs.ReadFile(charts.PGOperator(), "files/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if string(generated) != string(chart) {
		t.Errorf("charts/pg-operator/files/role.yaml differs from config/rbac/role.yaml: run make generate")
	}
}
