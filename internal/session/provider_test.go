package session

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/store"
)

// TestSessionsOnTheirProvider: a session's cluster is reached on the
// provider its record names, not on the one this Manager makes new
// clusters on. A kind session started from the page is checked and
// stopped on kind from a terminal, and a stop that cannot reach that
// provider fails and says why instead of reporting a deletion.
func TestSessionsOnTheirProvider(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	var mu sync.Mutex
	var asked []string
	unreachable := errors.New("no container engine answers")
	f.m.o.ProviderNamed = func(name string) (*cluster.Provider, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, name)
		return nil, unreachable
	}
	f.seed(t, "here", "failover", Ready, 0, nil)
	rec := &store.Session{ID: "on-kind", Learner: "alice", Lab: "failover", Cluster: "on-kind", Provider: "kind",
		State: string(Ready), Lang: "en", Data: []byte("{}")}
	if err := f.store.CreateSession(ctx, rec); err != nil {
		t.Fatal(err)
	}

	if _, err := f.m.KubeconfigPath(ctx, "here"); !errors.Is(err, ErrNoCluster) {
		t.Errorf("kubeconfig of an embedded session with no cluster: got %v, want ErrNoCluster", err)
	}
	if len(asked) != 0 {
		t.Errorf("an embedded session asked for providers %v, want none (it is this Manager's own)", asked)
	}

	_, err := f.m.Stop(ctx, "on-kind", "", nil)
	if !errors.Is(err, unreachable) || !strings.Contains(err.Error(), "on-kind") {
		t.Errorf("stop of a kind session whose provider cannot be reached: got %v, want its provider's error", err)
	}
	if !slices.Contains(asked, "kind") {
		t.Errorf("providers asked for: got %v, want kind", asked)
	}
	st, err := f.m.Status(ctx, "on-kind")
	if err != nil {
		t.Fatal(err)
	}
	if st.State != Ready {
		t.Errorf("after a stop that could not reach the cluster: state %s, want %s (nothing was deleted)", st.State, Ready)
	}
	evs, _ := timeline(ctx, f.m, "on-kind")
	for _, ev := range evs {
		if strings.Contains(ev.Message, "deleted") {
			t.Errorf("timeline says %q for a cluster that was not deleted", ev.Message)
		}
	}
}
