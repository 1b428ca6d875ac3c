package engine

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"oplab.dev/oplab/internal/lab"
)

// Evidence gathers what hints are chosen from: the operator's log lines and
// the cluster's events since the attempt began, and the time since T0 (or
// since the attempt began when there was no chaos).
func (e *Engine) Evidence(ctx context.Context, a *Attempt) (lab.Observed, error) {
	lines, err := e.logSource().Lines(ctx, a.Started)
	if err != nil {
		return lab.Observed{}, err
	}
	evs, err := e.events(ctx, a.Started)
	if err != nil {
		return lab.Observed{}, err
	}
	o := lab.Observed{Elapsed: time.Since(a.since()), Log: lines}
	for _, ev := range evs {
		o.Events = append(o.Events, lab.Event{Reason: ev.Reason, Message: ev.Message})
	}
	return o, nil
}

// events lists the events of every namespace last seen at or after since.
func (e *Engine) events(ctx context.Context, since time.Time) ([]corev1.Event, error) {
	list, err := shared(ctx, "events", func() (*corev1.EventList, error) {
		return e.cs.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	}, (*corev1.EventList).DeepCopy)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	var out []corev1.Event
	for _, ev := range list.Items {
		if seenAt(ev, since) {
			out = append(out, ev)
		}
	}
	return out, nil
}

// seenAt reports whether ev was last recorded at or after since. Events of
// the events.k8s.io API carry microsecond times; the core API's only
// seconds, so those count from the start of since's second.
func seenAt(ev corev1.Event, since time.Time) bool {
	var last time.Time
	if ev.Series != nil && !ev.Series.LastObservedTime.IsZero() {
		last = ev.Series.LastObservedTime.Time
	} else if !ev.EventTime.IsZero() {
		last = ev.EventTime.Time
	}
	if !last.IsZero() {
		return !last.Before(since)
	}
	last = ev.LastTimestamp.Time
	if last.IsZero() {
		last = ev.FirstTimestamp.Time
	}
	if last.IsZero() {
		last = ev.CreationTimestamp.Time
	}
	return !last.Before(since.Truncate(time.Second))
}

// eventSeen passes when an event with the reason (and a matching message)
// was recorded since the attempt began. An Event is evidence because only
// the cluster's own components (the operator among them) may write one: a
// learner's is refused (see package fence).
func (e *Engine) eventSeen(ctx context.Context, p *lab.EventSeen, a *Attempt) (bool, string) {
	evs, err := e.events(ctx, a.Started)
	if err != nil {
		return false, err.Error()
	}
	var re *regexp.Regexp
	if p.Message != "" {
		if re, err = regexp.Compile(p.Message); err != nil {
			return false, fmt.Sprintf("bad message pattern: %v", err)
		}
	}
	var other string
	for _, ev := range evs {
		if ev.Reason != p.Reason || !about(ev.InvolvedObject, p.Target) {
			continue
		}
		other = ev.Message
		if re == nil || re.MatchString(ev.Message) {
			return true, fmt.Sprintf("event %s on %s %s: %s", ev.Reason, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Message)
		}
	}
	if other != "" {
		return false, fmt.Sprintf("%s events were recorded, but none says %q (one says: %s)", p.Reason, p.Message, clip(other, 200))
	}
	return false, fmt.Sprintf("no %s event was recorded since the exercise started", p.Reason)
}

// about reports whether an event's object is the target's PostgresCluster
// or one of its objects: in its namespace, and named after it — the
// PostgresCluster and its StatefulSet by its name, its pods <cluster>-N,
// its Services <cluster>-rw and -ro, its claims <volume>-<cluster>-N. A
// decoy cluster's name can contain the target's, so a PostgresCluster and
// a pod must match exactly.
func about(obj corev1.ObjectReference, t lab.Target) bool {
	if obj.Namespace != namespace(t) {
		return false
	}
	name, c := obj.Name, t.Cluster
	switch obj.Kind {
	case "PostgresCluster", "StatefulSet":
		return name == c
	case "Pod":
		n, ok := strings.CutPrefix(name, c+"-")
		return ok && n != "" && strings.Trim(n, "0123456789") == ""
	}
	return name == c || strings.HasPrefix(name, c+"-") || strings.Contains(name, "-"+c+"-")
}

// logLineSeen passes when the operator logged a matching line since the
// attempt began.
func (e *Engine) logLineSeen(ctx context.Context, p *lab.LogLineSeen, a *Attempt) (bool, string) {
	re, err := regexp.Compile(p.Pattern)
	if err != nil {
		return false, fmt.Sprintf("bad log pattern: %v", err)
	}
	lines, err := e.logSource().Lines(ctx, a.Started)
	if err != nil {
		return false, fmt.Sprintf("cannot read the operator's log: %v", err)
	}
	for _, l := range lines {
		if re.MatchString(l) {
			return true, fmt.Sprintf("the operator logged: %s", clip(l, 200))
		}
	}
	return false, fmt.Sprintf("the operator has not logged a line matching %q since the exercise started (%d lines read)", p.Pattern, len(lines))
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// NextHint returns the hint to show after the first shown hints of the
// attempt's exercise, if it is due now, with what unlocked it. Due or not,
// the Hint's Next says what the hint after the shown ones waits for.
func (e *Engine) NextHint(ctx context.Context, l *lab.Lab, a *Attempt, shown int) (Hint, bool, error) {
	e.use(l)
	ex, err := exercise(l, a.Exercise)
	if err != nil {
		return Hint{}, false, err
	}
	if shown >= len(ex.Hints) {
		return Hint{}, false, nil
	}
	o, err := e.Evidence(ctx, a)
	if err != nil {
		return Hint{}, false, err
	}
	var h Hint
	i, ok := ex.NextHint(shown, o)
	if ok {
		h = Hint{Index: i, Hint: &ex.Hints[i]}
		h.Unlock, _ = h.Hint.Unlock(o)
		shown = i + 1
	}
	if shown < len(ex.Hints) {
		w := ex.Hints[shown].Wait(o)
		h.Next = &w
	}
	return h, ok, nil
}
