package app

import (
	"strings"
	"testing"

	"oplab.dev/oplab/internal/budget"
)

func TestParseBudget(t *testing.T) {
	b, err := ParseBudget("768Mi", 2048, "128Mi", "750m")
	if err != nil {
		t.Fatal(err)
	}
	if want := (budget.Budget{Memory: 768 << 20, Tasks: 2048, Etcd: 128 << 20, CPU: 750}); b != want {
		t.Errorf("got %+v, want %+v", b, want)
	}
	if b, err := ParseBudget("", 0, "", "none"); err != nil || b != (budget.Budget{CPU: -1}) {
		t.Errorf("no CPU cap: got %+v, %v", b, err)
	}
	if b, err := ParseBudget("", 0, "", ""); err != nil || b != (budget.Budget{}) {
		t.Errorf("nothing given: got %+v, %v; want the providers' defaults (zero)", b, err)
	}
	for _, bad := range []struct {
		memory string
		tasks  int64
		etcd   string
		want   string
	}{
		{"lots", 0, "", "want a size"},
		{"-1Gi", 0, "", "want a size"},
		{"64Mi", 0, "", "too small"},
		{"", -3, "", "positive"},
		{"", 0, "1Mi", "too small"},
	} {
		if _, err := ParseBudget(bad.memory, bad.tasks, bad.etcd, ""); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseBudget(%q, %d, %q): got %v, want an error saying %q", bad.memory, bad.tasks, bad.etcd, err, bad.want)
		}
	}
	for _, bad := range []string{"fast", "-1", "50m"} {
		if _, err := ParseBudget("", 0, "", bad); err == nil {
			t.Errorf("ParseBudget cpu %q: want an error", bad)
		}
	}
}
