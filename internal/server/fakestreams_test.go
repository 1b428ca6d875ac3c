package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"oplab.dev/oplab/internal/frame"
)

// fakeStreams is Streams in memory: it keeps every frame of each stream
// and replays them from a subscriber's resume point, then sends new ones.
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
