package controller

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/operator/instance"
	"oplab.dev/oplab/internal/operator/specs"
)

// member is one instance pod and what its server reported.
type member struct {
	pod     *corev1.Pod
	ordinal int
	// ready: the pod is Ready and not being deleted.
	ready  bool
	status instance.Status
	err    error // from Instance.Status
}

func (m *member) name() string { return m.pod.Name }
func (m *member) role() string { return m.pod.Labels[pgv1.LabelRole] }

// usable says whether the member can serve: ready, reachable, initialised.
func (m *member) usable() bool { return m != nil && m.ready && m.err == nil && m.status.Initialized }

// describe is a short summary for the log, e.g. "db-1 replica 0/3A2F10 ready".
func (m *member) describe() string {
	var b strings.Builder
	b.WriteString(m.name())
	switch {
	case m.pod.DeletionTimestamp != nil:
		b.WriteString(" terminating")
		return b.String()
	case m.err != nil:
		b.WriteString(" unreachable")
	case !m.status.Initialized:
		b.WriteString(" empty")
	case m.status.InRecovery:
		fmt.Fprintf(&b, " replica@%s", m.status.Position())
	default:
		fmt.Fprintf(&b, " primary@%s", m.status.Position())
	}
	if !m.ready {
		b.WriteString(" not-ready")
	}
	return b.String()
}

// members is the set of a cluster's instance pods, ordered by ordinal.
type members []*member

func (ms members) get(name string) *member {
	for _, m := range ms {
		if m.name() == name {
			return m
		}
	}
	return nil
}

func (ms members) countReady() int32 {
	var n int32
	for _, m := range ms {
		if m.ready {
			n++
		}
	}
	return n
}

// members lists the cluster's pods and asks each running one's server for
// its status.
func (p *pass) members(ctx context.Context) (members, error) {
	var pods corev1.PodList
	if err := p.r.Client.List(ctx, &pods, client.InNamespace(p.pgc.Namespace), client.MatchingLabels(specs.SelectorLabels(p.pgc))); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	var ms members
	for i := range pods.Items {
		pod := &pods.Items[i]
		m := &member{pod: pod, ordinal: ordinal(p.pgc.Name, pod.Name), ready: podReady(pod)}
		// A pod being deleted is asked too while its server still runs: it
		// may still take writes until it has stopped.
		if pod.Status.Phase == corev1.PodRunning && (pod.DeletionTimestamp == nil || specs.ServerRunning(pod)) {
			m.status, m.err = p.r.Instance.Status(ctx, pod)
		} else {
			m.err = fmt.Errorf("pod %s is %s", pod.Name, pod.Status.Phase)
		}
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b *member) int { return a.ordinal - b.ordinal })
	var desc []string
	for _, m := range ms {
		desc = append(desc, m.describe())
	}
	if len(desc) == 0 {
		desc = []string{"none"}
	}
	p.observe("pods: %s", strings.Join(desc, ", "))
	return ms, nil
}

// podReady is true for a pod whose Ready condition is True and that is not
// being deleted.
func podReady(pod *corev1.Pod) bool {
	if pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ordinal is the StatefulSet ordinal of pod <cluster>-<n>, or -1.
func ordinal(cluster, pod string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(pod, cluster+"-"))
	if err != nil || !strings.HasPrefix(pod, cluster+"-") || n < 0 {
		return -1
	}
	return n
}
