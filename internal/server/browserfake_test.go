package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"oplab.dev/oplab/internal/frame"
)

// scriptedApp plays one failover lab the way the application layer does,
// in memory, so the browser test drives every control of the page with
// answers of the real shapes.
type scriptedApp struct {
	*fakeApp
	streams *fakeStreams

	mu sync.Mutex
	// failStarts is how many starts fail (at installing the operator)
	// before one succeeds.
	failStarts int
	state      string
	t0, t1     time.Time
	exIndex    int
}

func newScriptedApp() *scriptedApp {
	return &scriptedApp{fakeApp: newFakeApp(), streams: newFakeStreams(), state: "ready"}
}

func (a *scriptedApp) status(id string) map[string]any {
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

func (a *scriptedApp) Status(_ context.Context, id string) (any, error) { return a.status(id), nil }

func (a *scriptedApp) Start(ctx context.Context, learner, lab, lang string, progress func(Update)) (any, error) {
	a.mu.Lock()
	fail := a.failStarts > 0
	a.failStarts--
	a.mu.Unlock()
	if fail {
		step := map[string]any{"phase": "provision", "index": 0, "message": "install the operator"}
		progress(Update{Kind: "step", Message: "install the operator", Data: step})
		step["done"], step["error"] = true, "helm install: timed out waiting for the operator's Deployment"
		progress(Update{Kind: "step", Message: "install the operator", Data: step})
		return nil, fmt.Errorf("start failover: install the operator: timed out waiting for the operator's Deployment (the cluster was deleted)")
	}
	if _, err := a.fakeApp.Start(ctx, learner, lab, lang, func(Update) {}); err != nil {
		return nil, err
	}
	for i, msg := range []string{"Starting etcd", "Starting kube-apiserver", "install the operator", "create the PostgresCluster prod-db"} {
		step := map[string]any{"phase": "provision", "index": i, "message": msg}
		progress(Update{Kind: "step", Message: msg, Data: step})
		time.Sleep(150 * time.Millisecond)
		step["done"], step["elapsedMs"] = true, 150
		progress(Update{Kind: "step", Message: msg, Data: step})
	}
	a.streams.log("info", "PostgresCluster/default/prod-db", "reconcile: 3/3 replicas ready, primary prod-db-0")
	a.streams.cluster("prod-db-0", []string{"prod-db-0", "prod-db-1", "prod-db-2"})
	return a.status("alice-2"), nil
}

func (a *scriptedApp) Chaos(_ context.Context, id, exercise string, progress func(Update)) (any, error) {
	progress(Update{Seq: 10, Session: id, Kind: "steady", Message: "steady state passed",
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

func (a *scriptedApp) Check(_ context.Context, id string, _ func(Update)) (any, error) {
	a.mu.Lock()
	a.t1 = a.t0.Add(1700 * time.Millisecond)
	a.state, a.exIndex = "completed", 1
	a.mu.Unlock()
	a.fakeApp.mu.Lock()
	a.sessions[id].State = "completed"
	a.fakeApp.mu.Unlock()
	return map[string]any{"exercise": "delete-primary", "passed": true, "recoveryMs": 1700, "status": a.status(id),
		"report": map[string]any{"passed": true, "score": 5, "total": 5, "results": []map[string]any{
			{"kind": "primaryChanged", "weight": 3, "passed": true, "reason": "the primary is prod-db-1, was prod-db-0"},
			{"kind": "rwEndpointsPointAtPrimary", "weight": 2, "passed": true, "reason": "prod-db-rw → prod-db-1"}}}}, nil
}

func (a *scriptedApp) Hint(_ context.Context, id string) (any, error) {
	return map[string]any{"exercise": "delete-primary", "new": true, "more": true, "shown": []map[string]any{
		{"tier": "nudge", "text": map[string]string{"en": "Look at the events of prod-db.", "ko": "prod-db의 이벤트를 보세요."},
			"unlock": map[string]any{"kind": "event", "reason": "FailingOver", "seen": "primary prod-db-0 is missing: electing prod-db-1"}}},
		"next": map[string]any{"leftMs": 39200, "evidence": []map[string]any{{"kind": "event", "reason": "FailoverComplete"}, {"kind": "log", "pattern": "(?i)promot"}}}}, nil
}

// fakeStreams keeps every frame of each stream and replays from a
// subscriber's resume point, then sends new ones.
type fakeStreams struct {
	mu     sync.Mutex
	epoch  string
	frames map[string][]frame.Frame
	subs   map[string][]chan frame.Frame
}

func newFakeStreams() *fakeStreams {
	return &fakeStreams{epoch: "e1", frames: map[string][]frame.Frame{}, subs: map[string][]chan frame.Frame{}}
}

// restart is a server's restart as the streams show it: every connection
// drops, and the streams come back as a new epoch whose frames start over.
func (f *fakeStreams) restart() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.epoch += "'"
	for _, subs := range f.subs {
		for _, ch := range subs {
			close(ch)
		}
	}
	f.subs = map[string][]chan frame.Frame{}
}

func (f *fakeStreams) publish(stream string, data any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := json.Marshal(data)
	if err != nil {
		panic(err) // the test's own maps
	}
	fr := frame.Data(uint64(len(f.frames[stream])+1), "", b)
	f.frames[stream] = append(f.frames[stream], fr)
	for _, ch := range f.subs[stream] {
		select {
		case ch <- fr:
		default:
		}
	}
}

func (f *fakeStreams) log(level, object, msg string) {
	f.publish("log", map[string]any{"time": time.Now(), "level": level, "object": object, "message": msg})
}

func (f *fakeStreams) cluster(primary string, pods []string) {
	var ps []map[string]any
	for _, p := range pods {
		role := "replica"
		if p == primary {
			role = "primary"
		}
		ps = append(ps, map[string]any{"name": p, "role": role, "ready": true, "phase": "Running"})
	}
	var ro []map[string]any
	for _, p := range pods[1:] {
		ro = append(ro, map[string]any{"ip": "10.0.0.1", "pod": p, "ready": true})
	}
	// The shape of clusterview.View.
	f.publish("cluster", map[string]any{
		"namespace": "default", "name": "prod-db",
		"cluster": map[string]any{"phase": "Ready", "replicas": 3, "readyReplicas": 3, "currentPrimary": primary, "targetPrimary": primary,
			"conditions": []map[string]any{{"type": "Ready", "status": "True"}, {"type": "PrimaryAvailable", "status": "True"}}},
		// A learner's Deployment with the instance's labels copied:
		// the view lists the first pods and counts the others.
		"pods": ps, "podsMore": 600,
		"endpoints": []map[string]any{
			{"service": "prod-db-rw", "addresses": []map[string]any{{"ip": "10.0.0.2", "pod": primary, "ready": true}}, "addressesMore": 0},
			{"service": "prod-db-ro", "addresses": ro, "addressesMore": 5}},
		"events":     []map[string]any{{"type": "Normal", "reason": "Promoted", "object": "Pod/" + primary, "message": fmt.Sprintf("%s is the primary", primary)}},
		"eventsMore": 0,
	})
}

func (f *fakeStreams) Subscribe(ctx context.Context, session, stream string, from Resume) (<-chan frame.Frame, error) {
	ch := make(chan frame.Frame, 64)
	f.mu.Lock()
	ch <- frame.Frame{Type: frame.TypeHello, Epoch: f.epoch}
	after := from.After
	if from.Epoch != f.epoch {
		after = 0
	}
	for _, fr := range f.frames[stream] {
		if fr.Seq > after {
			ch <- fr
		}
	}
	f.subs[stream] = append(f.subs[stream], ch)
	f.mu.Unlock()
	out := make(chan frame.Frame)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case fr, ok := <-ch:
				if !ok {
					return // dropped
				}
				select {
				case out <- fr:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// serveFake serves c (with a temporary data directory, answering to its
// own address as the local learner's server) on 127.0.0.1 until the test
// ends.
func serveFake(t *testing.T, c Config) (*httptest.Server, *Server) {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	c.DataDir, c.Hosts, c.Learner = t.TempDir(), Hosts(ts.Listener.Addr().String()), "local"
	s, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = s
	ts.Start()
	t.Cleanup(func() { ts.Close(); s.Close() })
	return ts, s
}
