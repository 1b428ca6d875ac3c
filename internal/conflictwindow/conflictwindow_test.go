package conflictwindow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

const controller = "system:serviceaccount:webapp-system:webapp-controller"

func raw(annotations map[string]string) runtime.RawExtension {
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": "a", "annotations": annotations}})
	return runtime.RawExtension{Raw: b}
}

func TestReview(t *testing.T) {
	now := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	marks := func(user string, until time.Time) map[string]string {
		return map[string]string{UserKey: user, UntilKey: until.Format(time.RFC3339Nano)}
	}
	marked := marks(controller, now.Add(time.Second))
	tests := []struct {
		name     string
		user     string
		groups   []string
		obj, old map[string]string
		create   bool
		code     int32 // 0: allowed
	}{
		{"the marked user, in the window", controller, nil, marked, marked, false, http.StatusConflict},
		{"the marked user, after the window", controller, nil, marks(controller, now.Add(-time.Second)), marks(controller, now.Add(-time.Second)), false, 0},
		{"another user, in the window", "system:serviceaccount:default:other", nil, marked, marked, false, 0},
		{"the admin, in the window", "kubernetes-admin", []string{"kubeadm:cluster-admins"}, marked, marked, false, 0},
		{"the admin sets the marks", "kubernetes-admin", []string{"kubeadm:cluster-admins"}, marked, nil, false, 0},
		{"a learner sets the marks", "learner", []string{"oplab:learners"}, marked, nil, false, http.StatusForbidden},
		{"a learner creates an object marked", "learner", nil, marked, nil, true, http.StatusForbidden},
		{"a learner moves the window", "learner", nil, marks(controller, now.Add(time.Hour)), marked, false, http.StatusForbidden},
		{"a learner leaves the marks as they are", "learner", nil, marked, marked, false, 0},
		{"a learner removes the marks after the window", "learner", nil, nil, marks(controller, now.Add(-time.Second)), false, 0},
		{"an object without marks", controller, nil, nil, nil, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &Webhook{Admins: []string{"system:masters", "kubeadm:cluster-admins"}, Now: func() time.Time { return now }}
			req := &admissionv1.AdmissionRequest{
				UID: types.UID("u1"), Name: "a", Operation: admissionv1.Update,
				Resource: metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
				UserInfo: authnv1.UserInfo{Username: tt.user, Groups: tt.groups},
				Object:   raw(tt.obj),
			}
			if tt.create {
				req.Operation = admissionv1.Create
			} else {
				req.OldObject = raw(tt.old)
			}
			resp := w.Review(req)
			if resp.UID != req.UID {
				t.Errorf("UID: got %q, want %q", resp.UID, req.UID)
			}
			var code int32
			if !resp.Allowed {
				code = resp.Result.Code
			}
			if code != tt.code {
				t.Fatalf("got code %d (%+v), want %d", code, resp.Result, tt.code)
			}
			if want := int64(0); tt.code == http.StatusConflict {
				want = 1
				if resp.Result.Reason != metav1.StatusReasonConflict {
					t.Errorf("reason: got %q, want Conflict", resp.Result.Reason)
				}
				if got := w.Refused(); got != want {
					t.Errorf("refused: got %d, want %d", got, want)
				}
			} else if got := w.Refused(); got != want {
				t.Errorf("refused: got %d, want %d", got, want)
			}
		})
	}
}

// TestServe: the webhook answers an AdmissionReview over HTTP, and its
// counter reads as the API server's metric does.
func TestServe(t *testing.T) {
	now := time.Now()
	w := &Webhook{Admins: []string{"system:masters"}}
	srv := httptest.NewServer(w)
	defer srv.Close()
	marked := map[string]string{UserKey: controller, UntilKey: now.Add(time.Minute).Format(time.RFC3339Nano)}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u2", Name: "a", Operation: admissionv1.Update,
			UserInfo: authnv1.UserInfo{Username: controller}, Object: raw(marked), OldObject: raw(marked)},
	}
	b, _ := json.Marshal(review)
	resp, err := http.Post(srv.URL+ValidatePath, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var got admissionv1.AdmissionReview
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil || got.Response == nil || got.Response.Allowed || got.Response.Result.Code != http.StatusConflict || got.Kind != "AdmissionReview" {
		t.Fatalf("got %+v (%v), want the review answered with a conflict", got, err)
	}
	if resp, err := http.Post(srv.URL+ValidatePath, "application/json", strings.NewReader("{")); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a malformed review: got %v %v, want 400", resp.StatusCode, err)
	}
	resp, err = http.Get(srv.URL + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if !strings.Contains(body.String(), fmt.Sprintf("\n%s 1\n", RefusedMetric)) {
		t.Errorf("metrics: got %q, want %s 1", body.String(), RefusedMetric)
	}
}
