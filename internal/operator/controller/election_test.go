package controller

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/operator/instance"
)

func replica(name string, ord int, lsn instance.LSN) *member {
	return &member{pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}, ordinal: ord, ready: true,
		status: instance.Status{Initialized: true, InRecovery: true, ReceivedLSN: lsn, ReplayedLSN: lsn - 1}}
}

func primary(name string, ord int) *member {
	return &member{pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}, ordinal: ord, ready: true,
		status: instance.Status{Initialized: true, CurrentLSN: 1000}}
}

func TestElect(t *testing.T) {
	t.Parallel()
	notReady := replica("db-3", 3, 900)
	notReady.ready = false
	unreachable := replica("db-4", 4, 950)
	unreachable.err = errors.New("connection refused")
	fresh := replica("db-5", 5, 0)
	fresh.status = instance.Status{}
	tests := []struct {
		name    string
		ms      members
		exclude string
		limit   int
		want    string
	}{
		{"most advanced wins", members{primary("db-0", 0), replica("db-1", 1, 500), replica("db-2", 2, 700)}, "db-0", 10, "db-2"},
		{"tie goes to lowest ordinal", members{replica("db-1", 1, 700), replica("db-2", 2, 700)}, "db-0", 10, "db-1"},
		{"never the excluded old primary", members{replica("db-0", 0, 999), replica("db-1", 1, 10)}, "db-0", 10, "db-1"},
		{"a primary is not a candidate", members{primary("db-1", 1)}, "db-0", 10, ""},
		{"not ready, unreachable and fresh are skipped", members{notReady, unreachable, fresh, replica("db-1", 1, 1)}, "db-0", 10, "db-1"},
		{"limit keeps pods a scale-down removes", members{replica("db-1", 1, 100), replica("db-2", 2, 900)}, "db-0", 2, "db-1"},
		{"nobody", members{}, "db-0", 10, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ""
			if m := elect(tt.ms, tt.exclude, tt.limit); m != nil {
				got = m.name()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPrimaryHealth(t *testing.T) {
	t.Parallel()
	deleting := primary("db-0", 0)
	deleting.pod.DeletionTimestamp = &metav1.Time{}
	notReady := primary("db-0", 0)
	notReady.ready = false
	unreachable := primary("db-0", 0)
	unreachable.err = instance.ErrUnreachable
	fresh := primary("db-0", 0)
	fresh.status = instance.Status{}
	tests := []struct {
		name   string
		m      *member
		wantOK bool
		why    string
	}{
		{"healthy", primary("db-0", 0), true, ""},
		{"missing", nil, false, "primary pod db-0 does not exist"},
		{"deleting", deleting, false, "primary pod db-0 is being deleted"},
		{"not ready", notReady, false, "primary pod db-0 is not ready"},
		{"unreachable", unreachable, false, "primary db-0 is unreachable: instance unreachable"},
		{"recreated", fresh, false, "primary pod db-0 was recreated without its data"},
		{"demoted", replica("db-0", 0, 5), false, "primary db-0 is running as a replica"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ok, why := primaryHealth("db-0", tt.m)
			if ok != tt.wantOK || why != tt.why {
				t.Errorf("got (%v, %q), want (%v, %q)", ok, why, tt.wantOK, tt.why)
			}
		})
	}
}

func TestStsReplicas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		replicas int32
		cur, tgt string
		want     int32
	}{
		{"spec when primary is kept", 2, "db-0", "db-0", 2},
		{"scale-down waits for switchover", 2, "db-2", "db-2", 3},
		{"scale-down waits while target is above", 1, "db-0", "db-3", 4},
		{"no primary yet", 3, "", "", 3},
		{"scale-up", 5, "db-1", "db-1", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pgc := &pgv1.PostgresCluster{ObjectMeta: metav1.ObjectMeta{Name: "db"}}
			pgc.Spec.Replicas = tt.replicas
			pgc.Status.CurrentPrimary, pgc.Status.TargetPrimary = tt.cur, tt.tgt
			if got := stsReplicas(pgc); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestOrdinal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pod  string
		want int
	}{{"db-0", 0}, {"db-12", 12}, {"db-x", -1}, {"other-1", -1}, {"", -1}, {"db-ro-1", -1}}
	for _, tt := range tests {
		if got := ordinal("db", tt.pod); got != tt.want {
			t.Errorf("ordinal(db, %q): got %d, want %d", tt.pod, got, tt.want)
		}
	}
}

func TestPodToCluster(t *testing.T) {
	t.Parallel()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", Namespace: "ns", Labels: map[string]string{pgv1.LabelCluster: "db"}}}
	reqs := podToCluster(t.Context(), pod)
	if len(reqs) != 1 || reqs[0].Name != "db" || reqs[0].Namespace != "ns" {
		t.Errorf("got %v, want one request for ns/db", reqs)
	}
	if reqs := podToCluster(t.Context(), &corev1.Pod{}); len(reqs) != 0 {
		t.Errorf("unlabelled pod: got %v, want none", reqs)
	}
}
