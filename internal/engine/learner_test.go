package engine

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/labs"
)

// refusedByAPI names the shipped shortcuts (lab/exercise/shortcut) that the
// API server refuses to the learner, whose steps they run as: writing a
// status, an Event or a simulated server's annotations, granting what the
// learner does not hold. Every other shortcut must get through the API and
// be refused by the goals, so a fence that refuses too much (a learner
// could no longer relabel a pod or edit a Service) fails the self-test too.
var refusedByAPI = map[string]bool{
	"postgres-operator/delete-leader/edit-status":         true, // status
	"postgres-operator/operator-down/edit-status":         true, // status
	"postgres-operator/operator-down/rollout-restart":     true, // oplab-system
	"postgres-operator/rbac-forbidden/edit-status":        true, // status
	"postgres-operator/storage-class/edit-status":         true, // status
	"redis-failover/delete-master/edit-status":            true, // status
	"failover/delete-primary/stop-and-promote-by-hand":    true, // status
	"operator-basics/operator-down/status-by-hand":        true, // status
	"rbac/restore-permissions/wildcard-role":              true, // escalation
	"rbac/restore-permissions/cluster-admin-binding":      true, // escalation
	"rbac/restore-permissions/aggregated-extra":           true, // aggregationRule needs cluster-admin
	"storage/missing-class/bound-by-hand":                 true, // status
	"switchover/primary-on-top/relabel-and-edit-status":   true, // status
	"switchover/primary-on-top/pin-rw-service":            true, // status
	"switchover/primary-on-top/simulated-primary-by-hand": true, // simulated server's annotations
	"switchover/primary-on-top/forged-switchover-event":   true, // Event
	"switchover/scale-down/forged-switching-over-event":   true, // Event
	"write-reconciler/status/status-by-hand":              true, // status
}

// Every shortcut named in refusedByAPI exists.
func TestRefusedByAPINamesShortcuts(t *testing.T) {
	ids, err := lab.IDs(labs.FS)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, id := range ids {
		l := shipped(t, id)
		for _, ex := range l.Exercises {
			for _, sc := range ex.Shortcuts {
				found[l.ID+"/"+ex.ID+"/"+sc.ID] = true
			}
		}
	}
	for k := range refusedByAPI {
		if !found[k] {
			t.Errorf("refusedByAPI names %s, which no lab has", k)
		}
	}
}

// A shortcut that repairs the operator's role as the learner would (a
// patch of its rules) puts back exactly the chart's rules: else it would
// not prove that the extra binding beside it is what the goals refuse.
func TestShortcutRepairsAreTheChartsRole(t *testing.T) {
	want, err := chartRules()
	if err != nil {
		t.Fatal(err)
	}
	l := shipped(t, "rbac")
	repairs := 0
	for _, ex := range l.Exercises {
		for _, sc := range ex.Shortcuts {
			for _, st := range sc.Steps {
				p, ok := st.Params.(*lab.PatchObject)
				if !ok || p.Kind != "ClusterRole" || p.Name != install.ReleaseName {
					continue
				}
				var patch struct {
					Rules []rbacv1.PolicyRule `json:"rules"`
				}
				if err := yaml.Unmarshal([]byte(p.Patch), &patch); err != nil {
					t.Fatalf("shortcut %s: %v", sc.ID, err)
				}
				if sc.ID == "wildcard-role" {
					continue
				}
				repairs++
				if !slices.EqualFunc(patch.Rules, want, func(x, y rbacv1.PolicyRule) bool { return x.String() == y.String() }) {
					t.Errorf("shortcut %s: got rules %v, want the chart's %v", sc.ID, patch.Rules, want)
				}
			}
		}
	}
	if repairs < 2 {
		t.Errorf("got %d repairs of the role in the rbac lab's shortcuts, want 2", repairs)
	}
}

// The self-test says in one line why the API server refused a shortcut's
// step: the policy's message, or RBAC's first line.
func TestRefusal(t *testing.T) {
	gr := schema.GroupResource{Resource: "events"}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"an admission policy", fmt.Errorf("shortcut step 1 (applyManifest): apply Event x: %w", apierrors.NewForbidden(gr, "x",
			errors.New("ValidatingAdmissionPolicy 'oplab-events' with binding 'oplab-events' denied request: oplab: writing Events is not allowed: why"))),
			"oplab: writing Events is not allowed: why"},
		{"RBAC escalation prevention", fmt.Errorf("shortcut step 1 (patchObject): %w", apierrors.NewForbidden(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, "pg-operator",
			errors.New("user \"u\" is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}"))),
			`clusterroles.rbac.authorization.k8s.io "pg-operator" is forbidden: user "u" is attempting to grant RBAC permissions not currently held`},
	}
	for _, tt := range tests {
		if got := refusal(tt.err); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The installer takes the cluster's admin credentials from the provider,
// so an Engine acting as the learner refuses to install: a shortcut that
// did would not be one a learner can take.
func TestLearnerCannotInstall(t *testing.T) {
	e := &Engine{learner: true}
	if err := e.installOperator(t.Context(), &lab.InstallOperator{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("install as the learner: got %v, want ErrUnsupported", err)
	}
}
