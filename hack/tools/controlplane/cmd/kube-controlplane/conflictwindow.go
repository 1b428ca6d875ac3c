package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	apiserveroptions "k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

// The ConflictWindow admission plugin answers one user's writes of an
// object with 409 Conflict for a while, as the API server answers a write
// that lost a race with another writer. A lab's grader uses it to see
// whether a learner's controller returns such an error, so that its pass
// is retried, or drops it: a refused write changes nothing, so no event
// follows that would bring the next pass.
//
// The grader marks the object with two annotations; only the cluster's
// admin (system:masters) may set or change them:
//
//	conflicts.oplab.dev/user: system:serviceaccount:webapp-system:webapp-controller
//	conflicts.oplab.dev/until: 2026-12-06T17:40:02.5Z
//
// Until that time every update of the object by that user (a patch or an
// apply too, status and other subresources included) is refused; after it
// the marks are inert, and anyone may remove them.
const (
	conflictWindowPlugin = "ConflictWindow"
	conflictUserKey      = "conflicts.oplab.dev/user"
	conflictUntilKey     = "conflicts.oplab.dev/until"
)

// conflictsRefused counts the writes ConflictWindow refused with a
// conflict: the grader's evidence that the controller met one.
var conflictsRefused = metrics.NewCounter(&metrics.CounterOpts{
	Name:           "oplab_conflict_window_refused_total",
	Help:           "Writes the ConflictWindow admission plugin answered with 409 Conflict.",
	StabilityLevel: metrics.ALPHA,
})

// registerConflictWindow registers the plugin with the API server's
// options and turns it on: it runs among the validating plugins, before
// ResourceQuota, which must stay last (what it charges a refused write is
// not given back).
func registerConflictWindow(s *apiserveroptions.ServerRunOptions) {
	legacyregistry.MustRegister(conflictsRefused)
	g := s.Admission.GenericAdmission
	g.Plugins.Register(conflictWindowPlugin, func(io.Reader) (admission.Interface, error) {
		return &conflictWindow{Handler: admission.NewHandler(admission.Create, admission.Update), now: time.Now}, nil
	})
	order := slices.Clone(g.RecommendedPluginOrder)
	at := slices.Index(order, "ResourceQuota")
	if at < 0 {
		at = len(order)
	}
	g.RecommendedPluginOrder = slices.Insert(order, at, conflictWindowPlugin)
}

type conflictWindow struct {
	*admission.Handler
	now func() time.Time
}

var _ admission.ValidationInterface = (*conflictWindow)(nil)

// Validate refuses the marked user's writes of a marked object until the
// mark's time, and anyone's but the admin's change of the marks.
func (c *conflictWindow) Validate(_ context.Context, a admission.Attributes, _ admission.ObjectInterfaces) error {
	u := a.GetUserInfo()
	if u == nil || slices.Contains(u.GetGroups(), user.SystemPrivilegedGroup) {
		return nil
	}
	obj, old := annotationsOf(a.GetObject()), annotationsOf(a.GetOldObject())
	if old[conflictUserKey] == u.GetName() && old[conflictUserKey] != "" {
		until, err := time.Parse(time.RFC3339Nano, old[conflictUntilKey])
		if err == nil && c.now().Before(until) {
			conflictsRefused.Inc()
			return apierrors.NewConflict(a.GetResource().GroupResource(), a.GetName(),
				fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again (refused on purpose by the lab's grader until %s)", until.Format(time.RFC3339)))
		}
	}
	for _, k := range []string{conflictUserKey, conflictUntilKey} {
		if v, ok := obj[k]; ok && (v != old[k] || a.GetOldObject() == nil) {
			return admission.NewForbidden(a, fmt.Errorf("only the cluster's admin sets the annotation %s", k))
		}
	}
	return nil
}

// annotationsOf returns o's annotations; none when o is nil or has no
// object metadata (a subresource's own kind, such as a scale).
func annotationsOf(o runtime.Object) map[string]string {
	if o == nil {
		return nil
	}
	m, err := meta.Accessor(o)
	if err != nil {
		return nil
	}
	return m.GetAnnotations()
}
