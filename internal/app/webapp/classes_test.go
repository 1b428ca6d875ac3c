package webapp

import (
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/server"
)

// TestClassRefusalsReachTheServer: on a real store, the class service's
// answers to a join, a rejoin and a start reach the server as members and
// as refusals with their reasons, and a member's catalogue is the class's.
func TestClassRefusalsReachTheServer(t *testing.T) {
	ctx := t.Context()
	a, err := app.Open(ctx, app.Config{DataDir: t.TempDir(), BinDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// No cluster is made here (the bin directory is empty, so clusters
	// could not be contained): classes are served as with
	// --insecure-clusters.
	w, err := New(ctx, a, Options{Serving: &app.Serving{Classes: true, Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := a.AddInstructor(ctx, "ada", "correct horse battery", false); err != nil {
		t.Fatal(err)
	}
	c, err := a.CreateClass(ctx, class.LocalAdmin(), class.Spec{Name: "morning", Labs: []string{"rbac", "failover"}, Capacity: 1})
	if err != nil {
		t.Fatal(err)
	}

	reason := func(err error) string {
		var r *server.Refusal
		if !errors.As(err, &r) {
			return "not a refusal: " + errString(err)
		}
		return r.Reason
	}
	if _, err := w.Join(ctx, "10.0.0.1", "WRONG-CODE", "Alice"); reason(err) != server.RefusalBadCode {
		t.Errorf("wrong code: got %s, want %s", reason(err), server.RefusalBadCode)
	}
	if _, err := w.Join(ctx, "10.0.0.1", c.JoinCode, "   "); reason(err) != server.RefusalBadName {
		t.Errorf("blank name: got %s, want %s", reason(err), server.RefusalBadName)
	}
	m, err := w.Join(ctx, "10.0.0.1", c.JoinCode, "Alice")
	if err != nil || m.Class != "morning" || m.Name != "Alice" || m.RejoinCode == "" || m.Learner == "" {
		t.Fatalf("join: got %+v, %v; want Alice in morning with a rejoin code", m, err)
	}
	if _, err := w.Join(ctx, "10.0.0.2", c.JoinCode, "Bob"); reason(err) != server.RefusalFull {
		t.Errorf("a second learner in a class of one: got %s, want %s", reason(err), server.RefusalFull)
	}
	again, err := w.Rejoin(ctx, "10.0.0.3", m.RejoinCode)
	if err != nil || again.Learner != m.Learner || again.RejoinCode != "" {
		t.Errorf("rejoin: got %+v, %v; want learner %s and no code shown again", again, err, m.Learner)
	}

	labs, err := w.Catalogue(ctx, m.Learner, "en")
	var ids []string
	for _, l := range labs {
		ids = append(ids, l.ID)
	}
	if want := []string{"rbac", "failover"}; err != nil || !slices.Equal(ids, want) {
		t.Errorf("the member's catalogue: got %v, %v; want %v", ids, err, want)
	}
	if _, err := w.Start(ctx, m.Learner, "quota", "en", nil); reason(err) != server.RefusalNotInClass {
		t.Errorf("start a lab the class does not run: got %s, want %s", reason(err), server.RefusalNotInClass)
	}
	if _, err := a.CloseClass(ctx, class.LocalAdmin(), "morning"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Start(ctx, m.Learner, "rbac", "en", nil); reason(err) != server.RefusalClosed {
		t.Errorf("start in a closed class: got %s, want %s", reason(err), server.RefusalClosed)
	}

	for range class.DefaultFailureBurst {
		_, _ = w.Rejoin(ctx, "10.0.0.9", "NOT-A-CODE")
	}
	_, err = w.Rejoin(ctx, "10.0.0.9", m.RejoinCode)
	var r *server.Refusal
	if !errors.As(err, &r) || r.Reason != server.RefusalTooMany || r.Retry <= 0 {
		t.Errorf("after %d wrong codes: got %v, want %s with a wait", class.DefaultFailureBurst, err, server.RefusalTooMany)
	}
	rec := httptest.NewRecorder()
	w.Metrics().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := `oplab_refusals_total{reason="rate_limit"} 1`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("/metrics after one refusal for too many codes: want %s", want)
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
