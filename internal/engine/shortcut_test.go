package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/internal/quiz"
)

// result returns the result of the check kind in r.
func result(t *testing.T, r Report, kind string) Result {
	t.Helper()
	for _, res := range r.Results {
		if res.Kind == kind {
			return res
		}
	}
	t.Fatalf("report has no %s result", kind)
	return Result{}
}

// brokenAttempt runs lab id's setup and the first exercise's chaos.
func brokenAttempt(t *testing.T, id string) (*Engine, *lab.Lab, *Attempt) {
	t.Helper()
	e, _ := newEngine(t)
	l := shipped(t, id)
	ctx := testContext(t, 5*time.Minute)
	if err := e.Setup(ctx, l, logProgress(t)); err != nil {
		t.Fatal(err)
	}
	a, err := e.Begin(ctx, l, l.Exercises[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := e.SteadyState(ctx, l, a, CheckOptions{}); err != nil || !rep.Passed {
		t.Fatalf("steady state: got %v %v, want passed", failed(rep), err)
	}
	if _, err := e.Chaos(ctx, l, a, logProgress(t)); err != nil {
		t.Fatalf("chaos: %v", err)
	}
	if a.T0.IsZero() || a.T0.Before(a.Started) {
		t.Fatalf("got T0 %v, want a time after the start %v", a.T0, a.Started)
	}
	return e, l, a
}

// The rbac lab: a wildcard rule or a cluster-admin binding lets the
// operator work again, yet the exercise must fail; Reset undoes the chaos.
func TestRBACShortcutsFail(t *testing.T) {
	t.Parallel()
	e, l, a := brokenAttempt(t, "rbac")
	ctx := testContext(t, 5*time.Minute)

	// Hints come from evidence: the operator logged forbidden.
	h, ok, err := e.NextHint(ctx, l, a, 0)
	if err != nil || !ok || h.Index != 0 || h.Hint.Tier != lab.TierNudge {
		t.Errorf("first hint after the forbidden log: got %+v %v %v, want the nudge", h, ok, err)
	}
	if u := h.Unlock; u.Kind != lab.UnlockLog || !strings.Contains(strings.ToLower(u.Seen), "forbidden") {
		t.Errorf("first hint's unlock: got %+v, want the forbidden log line", u)
	}
	if n := h.Next; n == nil || n.Due || n.Left <= 0 || n.Left > 3*time.Minute {
		t.Errorf("next hint: got %+v, want the one after 3m, not due", n)
	}

	crs := e.cs.RbacV1().ClusterRoles()
	role, err := crs.Get(ctx, install.ReleaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role.Rules = []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}
	if _, err := crs.Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Check(ctx, l, a, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed || !a.T1.IsZero() {
		t.Errorf("wildcard shortcut: got exercise passed (T1 %v), want failed", a.T1)
	}
	if r := result(t, rep, "replicasReady"); !r.Passed {
		t.Errorf("wildcard shortcut: got replicasReady failed (%s), want the operator working again", r.Reason)
	}
	if r := result(t, rep, "roleLeastPrivilege"); r.Passed || !strings.Contains(r.Reason, "*") {
		t.Errorf("wildcard shortcut: got roleLeastPrivilege %v %q, want failed naming the *", r.Passed, r.Reason)
	}
	if rep.Score >= rep.Total {
		t.Errorf("wildcard shortcut: got score %d/%d, want less than full", rep.Score, rep.Total)
	}

	// Reset restores the chart's role and the baseline's 3 replicas.
	if err := e.Reset(ctx, l, a, logProgress(t)); err != nil {
		t.Fatalf("reset: %v", err)
	}
	want, _ := chartRules()
	if got, err := e.rules(ctx, newRoleRef("", install.ReleaseName, "")); err != nil || !slices.EqualFunc(got, want, func(x, y rbacv1.PolicyRule) bool { return x.String() == y.String() }) {
		t.Errorf("after reset: got rules %v (%v), want the chart's", got, err)
	}
	if a.T0 != (time.Time{}) || a.PrimaryAtT0 != "" {
		t.Errorf("after reset: got attempt %+v, want it started afresh", a)
	}
	if err := e.Reset(ctx, l, a, nil); err != nil {
		t.Errorf("second reset: got %v, want it idempotent", err)
	}

	// Second attempt: bind the operator to cluster-admin instead.
	if _, err := e.Chaos(ctx, l, a, nil); err != nil {
		t.Fatalf("chaos again: %v", err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "pg-operator-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: install.ServiceAccount, Namespace: install.Namespace}},
	}
	if _, err := e.cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.Solve(ctx, l, a, nil); err != nil {
		t.Fatal(err)
	}
	rep, err = e.Check(ctx, l, a, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := result(t, rep, "roleLeastPrivilege"); rep.Passed || r.Passed || !strings.Contains(r.Reason, "cluster-admin") {
		t.Errorf("cluster-admin binding kept beside the repaired role: got passed %v, roleLeastPrivilege %q, want failed naming cluster-admin", rep.Passed, r.Reason)
	}
	if err := e.cs.RbacV1().ClusterRoleBindings().Delete(ctx, crb.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if rep, err = e.Check(ctx, l, a, CheckOptions{}); err != nil || !rep.Passed {
		t.Errorf("binding removed: got %v %v, want passed", failed(rep), err)
	}
	if a.Recovery() <= 0 {
		t.Errorf("got time to recovery %v, want > 0", a.Recovery())
	}
}

// The quota lab: deleting the quota lets the third instance start, yet the
// exercise must fail. Cluster questions of quizzes are answered from the
// same cluster.
func TestQuotaDeleteShortcutFails(t *testing.T) {
	t.Parallel()
	e, l, a := brokenAttempt(t, "quota")
	ctx := testContext(t, 5*time.Minute)

	// Chaos is idempotent: a second call leaves the fault and T0 as they are.
	t0 := a.T0
	if _, err := e.Chaos(ctx, l, a, nil); err != nil || !a.T0.Equal(t0) {
		t.Errorf("second chaos: got T0 %v (%v), want %v unchanged", a.T0, err, t0)
	}

	// Evidence-driven hints go in order: the nudge (time only) is not due,
	// so the event-triggered "where" hint waits behind it.
	if h, ok, err := e.NextHint(ctx, l, a, 0); err != nil || ok || h.Next == nil || h.Next.Left <= 0 || h.Next.Due {
		t.Errorf("first hint right after chaos: got %+v %v %v, want none due, the nudge waiting for its time", h, ok, err)
	}
	if h, ok, err := e.NextHint(ctx, l, a, 1); err != nil || !ok || h.Index != 1 ||
		h.Unlock.Kind != lab.UnlockMessage || !strings.Contains(h.Unlock.Seen, "exceeded quota") {
		t.Errorf("second hint after the exceeded quota event: got %+v %v %v, want hint 1, unlocked by the event's message", h, ok, err)
	}

	if err := e.cs.CoreV1().ResourceQuotas("default").Delete(ctx, "pg-quota", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rep, err := e.Check(ctx, l, a, CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed {
		t.Errorf("quota deleted: got exercise passed, want failed")
	}
	if r := result(t, rep, "replicasReady"); !r.Passed {
		t.Errorf("quota deleted: got replicasReady failed (%s), want 3 ready", r.Reason)
	}
	if r := result(t, rep, "quotaEnforced"); r.Passed || !strings.Contains(r.Reason, "deleted") {
		t.Errorf("quota deleted: got quotaEnforced %v %q, want failed saying deleted", r.Passed, r.Reason)
	}
	if want := rep.Total - 2; rep.Score != want {
		t.Errorf("quota deleted: got score %d/%d, want %d", rep.Score, rep.Total, want)
	}

	pgc, err := e.cluster(ctx, l.Target)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range quiz.QueryKinds() {
		q := quiz.Query{Query: k.Name, Cluster: "prod-db", Namespace: "default", Condition: "Ready"}
		got, err := e.Answer(ctx, q)
		if k.Name == "patroniLeader" || k.Name == "sentinelMaster" {
			// Third-party data planes, answered on kind (TestKindZalandoFailover,
			// TestKindSpotahomeFailover): here there is none to answer.
			if err == nil {
				t.Errorf("answer %s about prod-db, which runs neither Patroni nor Sentinel: got %q, want an error", k.Name, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("answer %s: %v", k.Name, err)
			continue
		}
		if k.Name == "currentPrimary" && got != pgc.Status.CurrentPrimary {
			t.Errorf("answer currentPrimary: got %q, want %q", got, pgc.Status.CurrentPrimary)
		}
		if k.Name == "specReplicas" && got != "3" {
			t.Errorf("answer specReplicas: got %q, want 3", got)
		}
	}
	if _, err := e.Answer(ctx, quiz.Query{Query: "currentPrimary", Cluster: "nope", Namespace: "default"}); err == nil {
		t.Errorf("answer about a missing cluster: got no error, want one")
	}

	// Reset: the quota goes, the cluster returns to 2 instances.
	if err := e.Reset(ctx, l, a, logProgress(t)); err != nil {
		t.Fatalf("reset: %v", err)
	}
	if ok, why := e.replicasReady(ctx, l.Target, 2); !ok {
		t.Errorf("after reset: %s", why)
	}
}

// stopOperator must really stop reconciling (on the embedded provider the
// operator is a host process kept in step with its pod), and startOperator
// must bring it back to act on what changed meanwhile.
func TestStopOperatorStopsReconciling(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	l := shipped(t, "switchover")
	ctx := testContext(t, 5*time.Minute)
	if err := e.Setup(ctx, l, nil); err != nil {
		t.Fatal(err)
	}
	// A pod of the operator's that has ended (evicted, as a kind node
	// leaves one) stays after the scale to 0: it runs nothing, and the
	// stop must not wait for it to go. Bound to a node that is not there,
	// so that no kubelet or KWOK acts on it; the pod GC collects it only
	// after a quarantine longer than the stop's wait.
	op := e.operator()
	d, err := e.cs.AppsV1().Deployments(op.Namespace).Get(ctx, op.Deployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ended, err := e.cs.CoreV1().Pods(op.Namespace).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "evicted", Labels: d.Spec.Selector.MatchLabels},
		Spec:       corev1.PodSpec{NodeName: "gone", Containers: []corev1.Container{{Name: "c", Image: "none"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ended.Status = corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted"}
	if _, err := e.cs.CoreV1().Pods(op.Namespace).UpdateStatus(ctx, ended, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // idempotent
		stopCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err := e.stopOperator(stopCtx)
		cancel()
		if err != nil {
			t.Fatalf("stop: %v", err)
		}
	}
	if _, err := e.cs.CoreV1().Pods(op.Namespace).Get(ctx, ended.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the ended pod: %v (want it still there, for the stop to have had it in view)", err)
	}
	if ok, why := e.operatorReady(ctx); ok {
		t.Fatalf("after stop: got %s, want no ready replica", why)
	}
	if err := e.scaleCluster(ctx, l.Target, 2); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if ok, why := e.generationCaughtUp(ctx, l.Target); ok {
		t.Errorf("operator stopped: got %q, want the new generation unseen", why)
	}
	if err := e.startOperator(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	ok, why, _ := poll(ctx, func(ctx context.Context) (bool, string) { return e.replicasReady(ctx, l.Target, 2) }, time.Minute, 100*time.Millisecond, 2, false)
	if !ok {
		t.Errorf("operator started again: got %s, want 2 ready", why)
	}
}
