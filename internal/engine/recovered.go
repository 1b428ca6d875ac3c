package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/lab"
)

// Recovered is when the cluster's own records show an exercise's goals
// holding, and which records say so.
type Recovered struct {
	At time.Time `json:"at"`
	// Evidence names, per goal, the record its moment rests on.
	Evidence []string `json:"evidence"`
}

// RecoveredAt answers, for goals that all hold at the moment at, since
// when the cluster's records show them holding: for each goal, the last
// recorded change that made it hold (the operator's events, with
// microseconds; its status timestamps and conditions' transition times,
// pods' Ready transitions and objects' last writes, with seconds), and of
// those the latest, no earlier than the attempt's T0 (or start) and no
// later than at. That is the earliest moment of recovery the records
// support, for when nothing watched the goals as they came to hold.
// ok is false when a goal's kind leaves no record of when it came to
// hold; the moment of the check is then all there is.
func (e *Engine) RecoveredAt(ctx context.Context, l *lab.Lab, a *Attempt, at time.Time) (Recovered, bool, error) {
	e.use(l)
	ex, err := exercise(l, a.Exercise)
	if err != nil {
		return Recovered{}, false, err
	}
	r := Recovered{At: a.since()}
	for _, c := range ex.Goals {
		t, what, ok, err := e.heldSince(ctx, c, a)
		if err != nil || !ok {
			return Recovered{}, false, err
		}
		r.Evidence = append(r.Evidence, fmt.Sprintf("%s: %s", c.Kind, what))
		if t.After(r.At) {
			r.At = t
		}
	}
	if r.At.After(at) {
		r.At = at
	}
	return r, true, nil
}

// heldSince returns the last recorded change that makes check c hold, and
// what record it is; ok is false for a kind without such a record.
func (e *Engine) heldSince(ctx context.Context, c lab.Check, a *Attempt) (time.Time, string, bool, error) {
	switch p := c.Params.(type) {
	case *lab.Condition:
		pgc, err := e.cluster(ctx, p.Target)
		if err != nil {
			return time.Time{}, "", false, err
		}
		cond := condition(pgc, p.Type)
		if cond == nil {
			return time.Time{}, "", false, nil
		}
		return cond.LastTransitionTime.Time, fmt.Sprintf("condition %s became %s at %s", p.Type, cond.Status, stamp(cond.LastTransitionTime.Time)), true, nil
	case *lab.PrimaryChanged:
		return e.primarySince(ctx, p.Target, a)
	case *lab.PrimaryIs:
		return e.primarySince(ctx, p.Target, a)
	case *lab.ExactlyOnePrimary:
		return e.primarySince(ctx, p.Target, a)
	case *lab.RWEndpointsPointAtPrimary:
		t, what, ok, err := e.primarySince(ctx, p.Target, a)
		if !ok || err != nil {
			return t, what, ok, err
		}
		eps, err := e.cs.DiscoveryV1().EndpointSlices(namespace(p.Target)).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + p.Target.Cluster + "-rw"})
		if err != nil {
			return time.Time{}, "", false, err
		}
		for _, s := range eps.Items {
			if w := lastWrite(s.ObjectMeta, ""); w.After(t) {
				t, what = w, fmt.Sprintf("EndpointSlice %s last written at %s", s.Name, stamp(w))
			}
		}
		return t, what, true, nil
	case *lab.ReplicasReady:
		pods, err := e.clusterPods(ctx, p.Target)
		if err != nil {
			return time.Time{}, "", false, err
		}
		var t time.Time
		what := "no pod became Ready since"
		for _, pod := range pods {
			for _, pc := range pod.Status.Conditions {
				if pc.Type == corev1.PodReady && pc.Status == corev1.ConditionTrue && pc.LastTransitionTime.After(t) {
					t, what = pc.LastTransitionTime.Time, fmt.Sprintf("pod %s became Ready at %s", pod.Name, stamp(pc.LastTransitionTime.Time))
				}
			}
		}
		return t, what, true, nil
	case *lab.ObservedGenerationCaughtUp:
		pgc, err := e.cluster(ctx, p.Target)
		if err != nil {
			return time.Time{}, "", false, err
		}
		w := lastWrite(pgc.ObjectMeta, "status")
		return w, fmt.Sprintf("the operator last wrote the status at %s", stamp(w)), true, nil
	case *lab.ClaimsBound:
		pvcs, err := e.clusterClaims(ctx, p.Target)
		if err != nil {
			return time.Time{}, "", false, err
		}
		var t time.Time
		what := "no claim changed since"
		for _, c := range pvcs {
			if w := lastWrite(c.ObjectMeta, "status"); w.After(t) {
				t, what = w, fmt.Sprintf("claim %s last changed status at %s", c.Name, stamp(w))
			}
		}
		return t, what, true, nil
	case *lab.OperatorReady:
		op := e.operator()
		d, err := e.cs.AppsV1().Deployments(op.Namespace).Get(ctx, op.Deployment, metav1.GetOptions{})
		if err != nil {
			return time.Time{}, "", false, err
		}
		w := lastWrite(d.ObjectMeta, "status")
		return w, fmt.Sprintf("the operator's Deployment last changed status at %s", stamp(w)), true, nil
	case *lab.SameCluster:
		// RecoveredAt runs once the goals pass: the PostgresCluster is the
		// one the attempt began with, so this goal never stopped holding.
		return a.since(), "the PostgresCluster was never replaced", true, nil
	case *lab.EventSeen:
		evs, err := e.events(ctx, a.Started)
		if err != nil {
			return time.Time{}, "", false, err
		}
		for _, ev := range evs {
			if ev.Reason == p.Reason {
				t := eventAt(ev)
				return t, fmt.Sprintf("event %s at %s", ev.Reason, stamp(t)), true, nil
			}
		}
		return time.Time{}, "", false, nil
	}
	return time.Time{}, "", false, nil
}

// primaryEvents are the reasons of the operator's events that end a change
// of primary: emitted once the new primary is recorded and labelled.
var primaryEvents = []string{"FailoverComplete", "SwitchoverComplete", "PrimaryRestarted", "PrimaryElected"}

// primarySince is when the current primary took over: the operator's
// status.currentPrimaryTimestamp, or its event that ended the change,
// whichever is later (the event, to the microsecond, when both record the
// same change).
func (e *Engine) primarySince(ctx context.Context, t lab.Target, a *Attempt) (time.Time, string, bool, error) {
	pgc, err := e.cluster(ctx, t)
	if err != nil {
		return time.Time{}, "", false, err
	}
	var at time.Time
	what := "the primary did not change"
	if ts := pgc.Status.CurrentPrimaryTimestamp; ts != nil {
		at, what = ts.Time, fmt.Sprintf("%s became the primary at %s", pgc.Status.CurrentPrimary, stamp(ts.Time))
	}
	evs, err := e.events(ctx, a.since().Truncate(time.Second))
	if err != nil {
		return time.Time{}, "", false, err
	}
	for _, ev := range evs {
		if ev.InvolvedObject.Kind != "PostgresCluster" || ev.InvolvedObject.Name != t.Cluster || !slices.Contains(primaryEvents, ev.Reason) {
			continue
		}
		if ts := eventAt(ev); ts.After(at) {
			at, what = ts, fmt.Sprintf("event %s at %s", ev.Reason, stamp(ts))
		}
	}
	return at, what, true, nil
}

// eventAt is when ev was last recorded, as precisely as it says.
func eventAt(ev corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Time
	}
	return ev.CreationTimestamp.Time
}

// lastWrite is the time of the object's newest write to subresource
// ("" for the object itself), from its managed fields.
func lastWrite(m metav1.ObjectMeta, subresource string) time.Time {
	var t time.Time
	for _, f := range m.ManagedFields {
		if f.Subresource == subresource && f.Time != nil && f.Time.After(t) {
			t = f.Time.Time
		}
	}
	if t.IsZero() {
		t = m.CreationTimestamp.Time
	}
	return t
}

func stamp(t time.Time) string { return t.Local().Format("15:04:05.000") }
