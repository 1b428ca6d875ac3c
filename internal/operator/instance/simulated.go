package instance

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Annotations that hold a simulated server's state on its pod. They are
// named so that `kubectl describe pod` shows a learner what is simulated.
const (
	simPrefix = "sim.databases.example.com/"
	// AnnotationSimRole is "primary" or "replica"; absent on a fresh pod.
	AnnotationSimRole = simPrefix + "role"
	// AnnotationSimTimeline is the WAL timeline, raised by each promotion.
	AnnotationSimTimeline = simPrefix + "timeline"
	// AnnotationSimLSNBase and AnnotationSimLSNSince anchor the WAL clock:
	// the primary's LSN is base + rate × (now − since).
	AnnotationSimLSNBase  = simPrefix + "lsn-base"
	AnnotationSimLSNSince = simPrefix + "lsn-since"
	// AnnotationSimUpstream is the primary a replica streams from.
	AnnotationSimUpstream = simPrefix + "upstream"
	// AnnotationSimLag is how far behind its primary a replica replays.
	AnnotationSimLag = simPrefix + "replication-lag"
)

const (
	simRolePrimary = "primary"
	simRoleReplica = "replica"
	// initialLSN is where a freshly initialised cluster's WAL starts.
	initialLSN LSN = 0x3000000
)

// Simulated keeps a pretend PostgreSQL server's state in its pod's
// annotations, for clusters where no container runs. The primary's WAL
// position grows at a steady rate from an anchor; a replica copies its
// primary's anchor and reads it a little late, so replicas lag by a few
// milliseconds of WAL, each by a different amount.
type Simulated struct {
	c    client.Client
	rate LSN // bytes of WAL per second
	now  func() time.Time
}

var _ Instance = (*Simulated)(nil)

// SimulatedOption configures a Simulated instance controller.
type SimulatedOption func(*Simulated)

// SimulatedWithClock replaces time.Now, for tests.
func SimulatedWithClock(now func() time.Time) SimulatedOption {
	return func(s *Simulated) { s.now = now }
}

// NewSimulated returns a simulated instance controller that writes pod
// annotations through c.
func NewSimulated(c client.Client, opts ...SimulatedOption) *Simulated {
	s := &Simulated{c: c, rate: 256 << 10, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Mode reports "simulated".
func (s *Simulated) Mode() string { return ModeSimulated }

// Status reads the simulated server's state from the pod's annotations.
// The server of a pod being deleted has stopped: it reports no server.
func (s *Simulated) Status(_ context.Context, pod *corev1.Pod) (Status, error) {
	if pod.DeletionTimestamp != nil {
		return Status{}, nil
	}
	st, err := readSimState(pod)
	if err != nil || st.role == "" {
		return Status{}, err
	}
	if st.role == simRolePrimary {
		return Status{Initialized: true, CurrentLSN: st.position(s.now(), s.rate)}, nil
	}
	received := st.position(s.now().Add(-st.lag), s.rate)
	replayed := st.position(s.now().Add(-2*st.lag), s.rate)
	return Status{Initialized: true, InRecovery: true, ReceivedLSN: received, ReplayedLSN: replayed, Upstream: st.upstream}, nil
}

// Promote makes the pod's simulated server a primary on a new timeline,
// starting from the WAL position it had reached; a fresh pod is
// initialised as the first primary.
func (s *Simulated) Promote(ctx context.Context, pod *corev1.Pod) error {
	st, err := readSimState(pod)
	if err != nil {
		return err
	}
	now := s.now()
	next := simState{role: simRolePrimary, timeline: 1, base: initialLSN, since: now}
	switch st.role {
	case simRolePrimary:
		return nil
	case simRoleReplica:
		cur, _ := s.Status(ctx, pod)
		next.timeline = st.timeline + 1
		next.base = cur.Position()
	}
	return s.write(ctx, pod, next)
}

// Follow makes the pod's simulated server a replica of primary: it copies
// the primary's WAL anchor and timeline, as pg_basebackup or pg_rewind
// would bring it level with the primary.
func (s *Simulated) Follow(ctx context.Context, pod, primary *corev1.Pod) error {
	up, err := readSimState(primary)
	if err != nil {
		return err
	}
	if up.role != simRolePrimary {
		return fmt.Errorf("follow %s: simulated server of %s is not a primary", primary.Name, pod.Name)
	}
	st, err := readSimState(pod)
	if err != nil {
		return err
	}
	next := simState{role: simRoleReplica, timeline: up.timeline, base: up.base, since: up.since,
		upstream: primary.Name, lag: lagOf(pod)}
	if st.equal(next) {
		return nil
	}
	return s.write(ctx, pod, next)
}

// Demote makes the pod's simulated primary a replica that streams from
// nobody yet, holding the WAL position it had reached; Follow then points
// it at the new primary.
func (s *Simulated) Demote(ctx context.Context, pod *corev1.Pod) error {
	st, err := readSimState(pod)
	if err != nil || st.role != simRolePrimary {
		return err
	}
	now := s.now()
	return s.write(ctx, pod, simState{role: simRoleReplica, timeline: st.timeline,
		base: st.position(now, s.rate), since: now, lag: lagOf(pod)})
}

// write stores st in the pod's annotations with a merge patch and updates
// pod in place.
func (s *Simulated) write(ctx context.Context, pod *corev1.Pod, st simState) error {
	before := pod.DeepCopy()
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	for _, k := range []string{AnnotationSimRole, AnnotationSimTimeline, AnnotationSimLSNBase, AnnotationSimLSNSince, AnnotationSimUpstream, AnnotationSimLag} {
		delete(pod.Annotations, k)
	}
	for k, v := range st.annotations() {
		pod.Annotations[k] = v
	}
	if err := s.c.Patch(ctx, pod, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("write simulated state of pod %s: %w", pod.Name, err)
	}
	return nil
}

// lagOf gives each pod its own replication lag, 20 to 220 ms, stable for
// the pod's lifetime, so that elections have a clear winner.
func lagOf(pod *corev1.Pod) time.Duration {
	h := fnv.New32a()
	h.Write([]byte(pod.Name))
	h.Write([]byte(pod.UID))
	return 20*time.Millisecond + time.Duration(h.Sum32()%200)*time.Millisecond
}

// simState is the simulated server state kept in annotations.
type simState struct {
	role     string
	timeline int
	base     LSN
	since    time.Time
	upstream string
	lag      time.Duration
}

// position is the WAL position at time t.
func (st simState) position(t time.Time, rate LSN) LSN {
	d := t.Sub(st.since)
	if d < 0 {
		return st.base
	}
	return st.base + LSN(d.Seconds()*float64(rate))
}

func (st simState) equal(o simState) bool {
	return st.role == o.role && st.timeline == o.timeline && st.base == o.base &&
		st.since.Equal(o.since) && st.upstream == o.upstream && st.lag == o.lag
}

func (st simState) annotations() map[string]string {
	a := map[string]string{
		AnnotationSimRole:     st.role,
		AnnotationSimTimeline: strconv.Itoa(st.timeline),
		AnnotationSimLSNBase:  st.base.String(),
		AnnotationSimLSNSince: st.since.UTC().Format(time.RFC3339Nano),
	}
	if st.role == simRoleReplica {
		a[AnnotationSimUpstream] = st.upstream
		a[AnnotationSimLag] = st.lag.String()
	}
	return a
}

// readSimState parses the annotations; a pod without them is fresh.
func readSimState(pod *corev1.Pod) (simState, error) {
	a := pod.Annotations
	st := simState{role: a[AnnotationSimRole], upstream: a[AnnotationSimUpstream]}
	if st.role == "" {
		return simState{}, nil
	}
	if st.role != simRolePrimary && st.role != simRoleReplica {
		return simState{}, fmt.Errorf("pod %s: annotation %s: unknown role %q", pod.Name, AnnotationSimRole, st.role)
	}
	var err error
	if st.timeline, err = strconv.Atoi(a[AnnotationSimTimeline]); err != nil {
		return simState{}, fmt.Errorf("pod %s: annotation %s: %w", pod.Name, AnnotationSimTimeline, err)
	}
	if st.base, err = ParseLSN(a[AnnotationSimLSNBase]); err != nil {
		return simState{}, fmt.Errorf("pod %s: annotation %s: %w", pod.Name, AnnotationSimLSNBase, err)
	}
	if st.since, err = time.Parse(time.RFC3339Nano, a[AnnotationSimLSNSince]); err != nil {
		return simState{}, fmt.Errorf("pod %s: annotation %s: %w", pod.Name, AnnotationSimLSNSince, err)
	}
	if st.role == simRoleReplica {
		if st.lag, err = time.ParseDuration(a[AnnotationSimLag]); err != nil {
			return simState{}, fmt.Errorf("pod %s: annotation %s: %w", pod.Name, AnnotationSimLag, err)
		}
	}
	return st, nil
}
