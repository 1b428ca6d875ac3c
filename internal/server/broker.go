package server

import "sync"

// broker passes the progress of a learner's long operations (a start's
// steps) to that learner's open pages. A page that cannot keep up loses
// updates rather than slowing the operation; the timeline has them all.
type broker struct {
	mu   sync.Mutex
	subs map[string]map[chan Update]struct{} // by learner
}

func newBroker() *broker { return &broker{subs: map[string]map[chan Update]struct{}{}} }

func (b *broker) subscribe(learner string) (<-chan Update, func()) {
	ch := make(chan Update, 64)
	b.mu.Lock()
	if b.subs[learner] == nil {
		b.subs[learner] = map[chan Update]struct{}{}
	}
	b.subs[learner][ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs[learner], ch)
		if len(b.subs[learner]) == 0 {
			delete(b.subs, learner)
		}
		b.mu.Unlock()
	}
}

func (b *broker) publish(learner string, u Update) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[learner] {
		select {
		case ch <- u:
		default:
		}
	}
}
