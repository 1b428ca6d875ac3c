package thirdparty_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"oplab.dev/oplab/internal/engine"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/podexec"
	"oplab.dev/oplab/internal/quiz"
)

// The checks the third-party labs are graded by (internal/engine's
// patroniLeader and sentinelMaster), run here against the real operators'
// clusters that TestKindZalandoFailover and TestKindSpotahomeFailover made
// and failed over: make test's kind phase holds them to what patronictl,
// psql, redis-cli and the operators' labels and Services really say. Each
// must pass on the cluster as it is and fail, saying why, on what a
// learner's shortcut or a lingering fault looks like: the pod deleted
// still named, a member missing, a label forged, a second master.

// once is one evaluation of a check on the cluster as it is now.
var once = engine.CheckOptions{Window: time.Millisecond}

// grade runs one check of kind with params and returns its result: with
// once, its verdict on one evaluation; else once it has passed twice in a
// row, as the labs ask, or its window has ended.
func grade(t *testing.T, ctx context.Context, e *engine.Engine, a *engine.Attempt, kind string, params any, o engine.CheckOptions) engine.Result {
	t.Helper()
	passes := 2
	if o.Window == once.Window {
		passes = 1
	}
	rep, err := e.RunChecks(ctx, a, []lab.Check{{Kind: kind, Params: params, Passes: passes}}, o)
	if err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	return rep.Results[0]
}

// expect holds r to its verdict and to a reason that says want.
func expect(t *testing.T, what string, r engine.Result, passed bool, want string) {
	t.Helper()
	if r.Passed != passed || !strings.Contains(r.Reason, want) {
		t.Errorf("%s: got passed %v (%q), want passed %v with a reason naming %q", what, r.Passed, r.Reason, passed, want)
	}
}

func newEngine(t *testing.T, r run) *engine.Engine {
	t.Helper()
	e, err := engine.New(engine.Target{Config: r.c.Config, Provider: r.c.Provider, Cluster: r.c.Name})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// gradePatroni: after the failover, patroniLeader with the lab's changed
// and two members passes and names the new leader; it fails when the pod
// deleted is the one still leading, when three members are asked of a
// cluster of two, and when a replica is labelled master by hand; the
// quiz's patroniLeader answers the new leader.
func gradePatroni(t *testing.T, r run) {
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	e := newEngine(t, r)
	const cluster = "my-postgres-cluster"
	after := &engine.Attempt{Started: time.Now(), Deleted: r.deleted}
	// The deleted pod comes back as a replica and must stream again.
	res := grade(t, ctx, e, after, "patroniLeader", &lab.PatroniLeader{Cluster: cluster, Changed: true, Members: 2}, engine.CheckOptions{Window: 4 * time.Minute})
	expect(t, "the new leader, two members", res, true, "leader "+r.next+" is labelled master")
	if !res.Passed {
		return // the cases below need the cluster settled
	}
	expect(t, "the deleted pod still leading", grade(t, ctx, e, &engine.Attempt{Deleted: r.next}, "patroniLeader",
		&lab.PatroniLeader{Cluster: cluster, Changed: true}, once), false, "still "+r.next)
	expect(t, "three members of two", grade(t, ctx, e, after, "patroniLeader",
		&lab.PatroniLeader{Cluster: cluster, Members: 3}, once), false, "1 replicas stream from the leader "+r.next+", want 2")
	if got, err := e.Answer(ctx, quiz.Query{Query: "patroniLeader", Cluster: cluster}); err != nil || got != r.next {
		t.Errorf("the quiz's patroniLeader: got %q (%v), want %s", got, err, r.next)
	}

	// A learner's shortcut: the replica labelled master by hand.
	pods := r.c.Client.CoreV1().Pods("default")
	label := func(role string) {
		t.Helper()
		patch := []byte(`{"metadata":{"labels":{"spilo-role":"` + role + `"}}}`)
		if _, err := pods.Patch(ctx, r.deleted, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	label("master")
	res = grade(t, ctx, e, after, "patroniLeader", &lab.PatroniLeader{Cluster: cluster}, once)
	label("replica")
	expect(t, "a replica labelled master", res, false, "labelled spilo-role=master")
}

// gradeSentinel: after the failover, sentinelMaster with the lab's
// changed passes and names the new master; it fails when the pod deleted
// is the one still named, and when a replica has been made a master
// behind Sentinel's back; the quiz's sentinelMaster answers the new
// master.
func gradeSentinel(t *testing.T, r run) {
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	e := newEngine(t, r)
	const name = "my-redis"
	after := &engine.Attempt{Started: time.Now(), Deleted: r.deleted}
	// The deleted pod comes back, resynchronises from the new master (not
	// ready meanwhile: the check counts ready pods only) and replicates.
	var res engine.Result
	waitFor(t, ctx, "sentinelMaster passing over the three Redis pods", 4*time.Minute, func() (string, bool) {
		res = grade(t, ctx, e, after, "sentinelMaster", &lab.SentinelMaster{Name: name, Changed: true}, once)
		return res.Reason, res.Passed && strings.Contains(res.Reason, "with 2 replicas")
	})
	expect(t, "the new master", res, true, "every Sentinel names "+r.next+" the master, which it is, with 2 replicas")
	expect(t, "the deleted pod still named", grade(t, ctx, e, &engine.Attempt{Deleted: r.next}, "sentinelMaster",
		&lab.SentinelMaster{Name: name, Changed: true}, once), false, "still "+r.next)
	if got, err := e.Answer(ctx, quiz.Query{Query: "sentinelMaster", Cluster: name}); err != nil || got != r.next {
		t.Errorf("the quiz's sentinelMaster: got %q (%v), want %s", got, err, r.next)
	}

	// A second master: the replica that came back told to replicate from
	// no one, which Sentinel does not know.
	cli := func(args ...string) string {
		t.Helper()
		out, err := podexec.Run(ctx, r.c.Config, "default", r.deleted, "redis", append([]string{"redis-cli"}, args...)...)
		if err != nil {
			t.Fatalf("redis-cli %v in %s: %v", args, r.deleted, err)
		}
		return strings.TrimSpace(out)
	}
	masterIP := podIP(t, ctx, r.c, r.next)
	cli("REPLICAOF", "NO", "ONE")
	res = grade(t, ctx, e, after, "sentinelMaster", &lab.SentinelMaster{Name: name}, once)
	cli("REPLICAOF", masterIP, "6379")
	expect(t, "a replica made a master", res, false, r.deleted+" does not replicate from the master "+masterIP+`: ROLE "master`)
}
