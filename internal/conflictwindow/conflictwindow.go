// Package conflictwindow is the ConflictWindow admission webhook: where a
// learner's cluster runs upstream kube-apiserver (kind), it answers one
// user's writes of an object with 409 Conflict for a while, as the API
// server answers a write that lost a race, and as kube-controlplane's
// ConflictWindow admission plugin does on the other providers
// (hack/tools/controlplane/cmd/kube-controlplane/conflictwindow.go, whose
// rules these are). The grader of a learner's controller uses it to see
// whether the controller returns such an error, so that its pass is
// retried, or drops it.
//
// The grader marks the object with two annotations, which only the
// cluster's admin may set or change:
//
//	conflicts.oplab.dev/user: system:serviceaccount:webapp-system:webapp-controller
//	conflicts.oplab.dev/until: 2026-12-06T17:40:02.5Z
//
// Until that time every write of the object by that user is refused; after
// it the marks are inert. The webhook counts what it refused on its
// /metrics, under the plugin's metric's name, for whoever runs it to see;
// the grader does not read that count but the API server's of the
// webhook's rejections, since any pod of the cluster can send the webhook
// a review of its own.
package conflictwindow

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The marks, and the counter of refused writes.
const (
	UserKey       = "conflicts.oplab.dev/user"
	UntilKey      = "conflicts.oplab.dev/until"
	RefusedMetric = "oplab_conflict_window_refused_total"
)

// Paths the webhook serves.
const (
	ValidatePath = "/validate"
	MetricsPath  = "/metrics"
)

// maxReview bounds an AdmissionReview read: the API server sends the
// object and the old one, each at most its request limit (3 MiB).
const maxReview = 8 << 20

// Webhook decides and counts. Its zero value is not usable: set Admins.
type Webhook struct {
	// Admins are the groups whose writes always pass and who alone may
	// set the marks: the cluster's admins.
	Admins []string
	// Now is the clock; time.Now when nil.
	Now     func() time.Time
	refused atomic.Int64
}

// Refused is how many writes the webhook has refused.
func (w *Webhook) Refused() int64 { return w.refused.Load() }

// Review answers one admission request.
func (w *Webhook) Review(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	allow := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if slices.ContainsFunc(req.UserInfo.Groups, func(g string) bool { return slices.Contains(w.Admins, g) }) {
		return allow
	}
	obj, old := annotations(req.Object), annotations(req.OldObject)
	if u := old[UserKey]; u != "" && u == req.UserInfo.Username {
		until, err := time.Parse(time.RFC3339Nano, old[UntilKey])
		if err == nil && w.now().Before(until) {
			w.refused.Add(1)
			gr := metav1.GroupResource{Group: req.Resource.Group, Resource: req.Resource.Resource}
			return &admissionv1.AdmissionResponse{UID: req.UID, Result: &metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusConflict, Reason: metav1.StatusReasonConflict,
				Message: fmt.Sprintf("Operation cannot be fulfilled on %s %q: the object has been modified; please apply your changes to the latest version and try again (refused on purpose by the lab's grader until %s)",
					gr.String(), req.Name, until.Format(time.RFC3339)),
				Details: &metav1.StatusDetails{Name: req.Name, Group: req.Resource.Group, Kind: req.Resource.Resource},
			}}
		}
	}
	for _, k := range []string{UserKey, UntilKey} {
		if v, ok := obj[k]; ok && (v != old[k] || req.OldObject.Raw == nil) {
			return &admissionv1.AdmissionResponse{UID: req.UID, Result: &metav1.Status{
				Status: metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
				Message: fmt.Sprintf("only the cluster's admin sets the annotation %s", k),
			}}
		}
	}
	return allow
}

func (w *Webhook) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// annotations are the annotations of a raw object; none when it has no
// object metadata.
func annotations(o runtime.RawExtension) map[string]string {
	var m struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if len(o.Raw) == 0 || json.Unmarshal(o.Raw, &m) != nil {
		return nil
	}
	return m.Metadata.Annotations
}

// ServeHTTP serves AdmissionReviews at ValidatePath and the counter at
// MetricsPath, in Prometheus's text format.
func (w *Webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == MetricsPath && r.Method == http.MethodGet:
		rw.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(rw, "# HELP %s Writes the ConflictWindow webhook answered with 409 Conflict.\n# TYPE %s counter\n%s %d\n",
			RefusedMetric, RefusedMetric, RefusedMetric, w.Refused())
	case r.URL.Path == ValidatePath && r.Method == http.MethodPost:
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(io.LimitReader(r.Body, maxReview)).Decode(&review); err != nil || review.Request == nil {
			http.Error(rw, "want an AdmissionReview with a request", http.StatusBadRequest)
			return
		}
		review.Response = w.Review(review.Request)
		review.Request = nil
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(&review)
	default:
		http.NotFound(rw, r)
	}
}
