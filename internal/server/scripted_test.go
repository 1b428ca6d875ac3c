package server

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"
)

// scriptedLearning plays one failover lab the way the application layer
// does, over a fakeLearning, so the browser tests drive every control of
// the page with answers of the real shapes; the lab's operator log and
// cluster view go to streams, as a real session's cluster would send them.
type scriptedLearning struct {
	*fakeLearning
	streams *fakeStreams

	mu sync.Mutex
	// failStarts is how many starts fail (at installing the operator)
	// before one succeeds.
	failStarts int
	state      string
	t0, t1     time.Time
	exIndex    int
	// heldStatus, when set, holds the next status read after it is
	// taken: asked signals it was taken, and the status is answered when
	// release is closed, as a slow read under load would be.
	heldStatus *heldStatus
}

type heldStatus struct{ asked, release chan struct{} }

func newScriptedLearning(l *fakeLearning, streams *fakeStreams) *scriptedLearning {
	return &scriptedLearning{fakeLearning: l, streams: streams, state: "ready"}
}

func (a *scriptedLearning) status(id string) map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	att := map[string]any{"lab": "failover", "exercise": "delete-primary", "started": time.Now().Add(-time.Minute)}
	if !a.t0.IsZero() {
		att["t0"] = a.t0
	}
	if !a.t1.IsZero() {
		att["t1"] = a.t1
	}
	// What the application would allow in each state of the one
	// exercise, which has chaos.
	actions := map[string][]string{"ready": {"chaos", "stop"}, "in-exercise": {"check", "hint", "reset", "stop"}}[a.state]
	return map[string]any{"id": id, "learner": "local", "lab": "failover", "state": a.state, "active": liveState(a.state),
		"actions": actions, "exercise": a.exIndex, "exerciseId": "delete-primary", "exercises": 1, "attempt": att}
}

// Wake is what the page reads its session's status with.
func (a *scriptedLearning) Wake(ctx context.Context, id string, _ func(Update)) (any, error) {
	return a.Status(ctx, id)
}

func (a *scriptedLearning) Status(_ context.Context, id string) (any, error) {
	st := a.status(id)
	a.mu.Lock()
	h := a.heldStatus
	a.heldStatus = nil
	a.mu.Unlock()
	if h != nil {
		close(h.asked)
		<-h.release
	}
	return st, nil
}

func (a *scriptedLearning) Start(ctx context.Context, learner, lab, lang string, progress func(Update)) (any, error) {
	a.mu.Lock()
	fail := a.failStarts > 0
	a.failStarts--
	a.mu.Unlock()
	if fail {
		step := map[string]any{"phase": "provision", "index": 0, "message": "install the operator"}
		progress(Update{Kind: "step", Message: "install the operator", Data: step})
		step = maps.Clone(step) // the server may still be writing the one it was given
		step["done"], step["error"] = true, "helm install: timed out waiting for the operator's Deployment"
		progress(Update{Kind: "step", Message: "install the operator", Data: step})
		return nil, fmt.Errorf("start failover: install the operator: timed out waiting for the operator's Deployment (the cluster was deleted)")
	}
	if _, err := a.fakeLearning.Start(ctx, learner, lab, lang, func(Update) {}); err != nil {
		return nil, err
	}
	for i, msg := range []string{"Starting etcd", "Starting kube-apiserver", "install the operator", "create the PostgresCluster prod-db"} {
		step := map[string]any{"phase": "provision", "index": i, "message": msg}
		progress(Update{Kind: "step", Message: msg, Data: step})
		time.Sleep(150 * time.Millisecond)
		step = maps.Clone(step)
		step["done"], step["elapsedMs"] = true, 150
		progress(Update{Kind: "step", Message: msg, Data: step})
	}
	a.streams.log("info", "PostgresCluster/default/prod-db", "reconcile: 3/3 replicas ready, primary prod-db-0")
	a.streams.cluster("prod-db-0", []string{"prod-db-0", "prod-db-1", "prod-db-2"})
	return a.status("alice-2"), nil
}

func (a *scriptedLearning) Chaos(_ context.Context, id, exercise string, progress func(Update)) (any, error) {
	progress(Update{Seq: fakeTimeline + 10, Session: id, Kind: "steady", Message: "steady state passed",
		Data: map[string]any{"passed": true, "score": 4, "total": 4, "results": []map[string]any{
			{"kind": "exactlyOnePrimary", "weight": 1, "passed": true, "reason": "prod-db-0 is the only primary"}}}})
	a.mu.Lock()
	a.state, a.t0 = "in-exercise", time.Now()
	a.mu.Unlock()
	a.streams.log("info", "PostgresCluster/default/prod-db", "primary prod-db-0 is missing: fencing it")
	a.streams.log("error", "PostgresCluster/default/prod-db", `pods "prod-db-0" is forbidden: the operator may not patch it`)
	a.streams.log("info", "PostgresCluster/default/prod-db", "promoted prod-db-1, -rw now selects it")
	a.streams.cluster("prod-db-1", []string{"prod-db-1", "prod-db-2", "prod-db-0"})
	return a.status(id), nil
}

func (a *scriptedLearning) Check(_ context.Context, id string, _ func(Update)) (any, error) {
	a.mu.Lock()
	a.t1 = a.t0.Add(1700 * time.Millisecond)
	a.state, a.exIndex = "completed", 1
	a.mu.Unlock()
	a.setState(id, "completed")
	return map[string]any{"exercise": "delete-primary", "passed": true, "recoveryMs": 1700, "status": a.status(id),
		"report": map[string]any{"passed": true, "score": 5, "total": 5, "results": []map[string]any{
			{"kind": "primaryChanged", "weight": 3, "passed": true, "reason": "the primary is prod-db-1, was prod-db-0"},
			{"kind": "rwEndpointsPointAtPrimary", "weight": 2, "passed": true, "reason": "prod-db-rw → prod-db-1"}}}}, nil
}

func (a *scriptedLearning) Hint(_ context.Context, id string) (any, error) {
	return map[string]any{"exercise": "delete-primary", "new": true, "more": true, "shown": []map[string]any{
		{"tier": "nudge", "text": map[string]string{"en": "Look at the events of prod-db.", "ko": "prod-db의 이벤트를 보세요."},
			"unlock": map[string]any{"kind": "event", "reason": "FailingOver", "seen": "primary prod-db-0 is missing: electing prod-db-1"}}},
		"next": map[string]any{"leftMs": 39200, "evidence": []map[string]any{{"kind": "event", "reason": "FailoverComplete"}, {"kind": "log", "pattern": "(?i)promot"}}}}, nil
}
