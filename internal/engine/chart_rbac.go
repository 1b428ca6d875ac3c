package engine

import (
	"fmt"
	"os"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"oplab.dev/oplab/charts"
	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/internal/operator/thirdparty"
)

// The RBAC an operator's chart ships is what grading compares a repaired
// role with and what a reset puts back. It is rendered from the server's
// own copy of the chart (embedded for the reference operator, built into
// the bin directory for a third-party one), with the values its installer
// uses, never read back from the learner's cluster: the Helm release's
// record there is theirs to edit.

// referenceManifests is the reference operator's chart, rendered.
var referenceManifests = sync.OnceValues(func() ([]install.Manifest, error) {
	c, err := install.LoadChart(charts.PGOperator())
	if err != nil {
		return nil, err
	}
	return install.Render(c, install.ReleaseName, install.Namespace, nil)
})

// thirdPartyManifests caches third-party charts rendered, by chart
// directory: a chart built into the bin directory does not change under a
// running server.
var thirdPartyManifests struct {
	mu sync.Mutex
	m  map[string][]install.Manifest
}

// chartManifests renders the chart of the lab's operator.
func (e *Engine) chartManifests() ([]install.Manifest, error) {
	e.op.mu.Lock()
	name := e.op.name
	e.op.mu.Unlock()
	if name == "" {
		return referenceManifests()
	}
	o, err := thirdparty.Find(name)
	if err != nil {
		return nil, err
	}
	dir := o.ChartDir(e.t.BinDir)
	thirdPartyManifests.mu.Lock()
	defer thirdPartyManifests.mu.Unlock()
	if ms, ok := thirdPartyManifests.m[dir]; ok {
		return ms, nil
	}
	c, err := install.LoadChart(os.DirFS(dir))
	if err != nil {
		return nil, fmt.Errorf("chart of %s: %w (make images-operators builds it)", o.Name, err)
	}
	ms, err := install.Render(c, o.Release.Name, o.Release.Namespace, o.Values)
	if err != nil {
		return nil, fmt.Errorf("render the chart of %s: %w", o.Name, err)
	}
	if thirdPartyManifests.m == nil {
		thirdPartyManifests.m = map[string][]install.Manifest{}
	}
	thirdPartyManifests.m[dir] = ms
	return ms, nil
}

// clusterRoleRules returns the rules of the ClusterRole name among ms;
// found is false when the chart has no such role.
func clusterRoleRules(ms []install.Manifest, name string) (rules []rbacv1.PolicyRule, found bool, err error) {
	for _, m := range ms {
		if m.Kind != "ClusterRole" || m.Name != name {
			continue
		}
		var cr rbacv1.ClusterRole
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.Object, &cr); err != nil {
			return nil, true, fmt.Errorf("decode the chart's ClusterRole %s: %w", name, err)
		}
		return cr.Rules, true, nil
	}
	return nil, false, nil
}

// chartRoleRules returns the rules of the lab's operator's chart's
// ClusterRole name; found is false when the chart has none of that name.
func (e *Engine) chartRoleRules(name string) ([]rbacv1.PolicyRule, bool, error) {
	ms, err := e.chartManifests()
	if err != nil {
		return nil, false, err
	}
	return clusterRoleRules(ms, name)
}

// chartGrants is what the lab's operator's chart grants sa.
func (e *Engine) chartGrants(sa serviceAccount) (permissions, error) {
	ms, err := e.chartManifests()
	if err != nil {
		return permissions{}, err
	}
	return permissionsOf(ms, sa)
}

// chartRules are the rules of the reference operator's ClusterRole as its
// chart ships them.
func chartRules() ([]rbacv1.PolicyRule, error) {
	ms, err := referenceManifests()
	if err != nil {
		return nil, err
	}
	rules, found, err := clusterRoleRules(ms, install.ReleaseName)
	if err == nil && !found {
		err = fmt.Errorf("the chart has no ClusterRole %s", install.ReleaseName)
	}
	return rules, err
}

// chartPermissions is what the reference operator's chart grants its
// ServiceAccount, rendered with the chart's default values: the rules of
// the roles its ClusterRoleBindings and RoleBindings bind to it.
func chartPermissions() (permissions, error) {
	ms, err := referenceManifests()
	if err != nil {
		return permissions{}, err
	}
	return permissionsOf(ms, serviceAccount{install.Namespace, install.ServiceAccount})
}
