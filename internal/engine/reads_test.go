package engine

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/lab"
)

// countingTransport counts the requests that pass through it by method
// and path.
type countingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen map[string]int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.seen[r.Method+" "+r.URL.Path]++
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

func (c *countingTransport) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := c.seen
	c.seen = map[string]int{}
	return seen
}

// TestChecksShareTheirReads, on a real cluster: the checks of one Check
// run side by side and, in each round of evaluations, read the
// PostgresCluster and its pods once between them, not once each; a check
// polled again reads afresh.
func TestChecksShareTheirReads(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t)
	counter := &countingTransport{seen: map[string]int{}}
	cfg := *c.Config
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter }
	e, err := New(Target{Config: &cfg, Provider: c.Provider, Cluster: c.Name, BinDir: clustertest.BinDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	l := shipped(t, "failover")
	ctx := testContext(t, 3*time.Minute)
	if err := e.Setup(ctx, l, logProgress(t)); err != nil {
		t.Fatalf("setup: %v", err)
	}
	// The steady state's checks, each to pass once: a check that must
	// pass several times in a row polls again, and each poll reads afresh.
	var steady []lab.Check
	for _, c := range l.Exercises[0].SteadyState {
		c.Passes = 1
		steady = append(steady, c)
	}
	if len(steady) < 3 {
		t.Fatalf("the failover lab's steady state has %d checks; the test needs several that read the cluster", len(steady))
	}
	// Until the cluster is steady, checks poll again.
	if rep, err := e.runChecks(ctx, PhaseSteadyState, nil, steady, CheckOptions{}); err != nil || !rep.Passed {
		t.Fatalf("steady state after setup: %v, %s", err, firstFailure(rep))
	}

	counter.take()
	rep, err := e.runChecks(ctx, PhaseSteadyState, nil, steady, CheckOptions{})
	seen := counter.take()
	if err != nil || !rep.Passed {
		t.Fatalf("steady state: %v, %s", err, firstFailure(rep))
	}
	for _, r := range rep.Results {
		if r.Polls != 1 {
			t.Fatalf("check %s took %d polls on a steady cluster; the count below assumes one each", r.Kind, r.Polls)
		}
	}
	t.Logf("requests of one Check of %d checks: %v", len(steady), seen)
	ns := namespace(l.Target)
	if n := seen["GET /apis/databases.example.com/v1/namespaces/"+ns+"/postgresclusters/"+l.Target.Cluster]; n != 1 {
		t.Errorf("the PostgresCluster was read %d times by %d checks, want once", n, len(steady))
	}
	if n := seen["GET /api/v1/namespaces/"+ns+"/pods"]; n != 1 {
		t.Errorf("the cluster's pods were listed %d times by %d checks, want once", n, len(steady))
	}

	// A second poll is a new reading: a check that fails reads each time.
	pgc, err := e.cluster(ctx, l.Target)
	if err != nil {
		t.Fatal(err)
	}
	counter.take()
	changed := l.Exercises[0].Goals[0]
	changed.Passes = 1
	rep, err = e.runChecks(ctx, PhaseGoals, &Attempt{Baseline: Baseline{Primary: pgc.Status.CurrentPrimary}}, []lab.Check{changed}, CheckOptions{Timeout: time.Second})
	seen = counter.take()
	if err != nil || rep.Passed || rep.Results[0].Polls < 2 {
		t.Fatalf("primaryChanged before any chaos: got passed %v after %d polls (%v), want a failure polled again", rep.Passed, rep.Results[0].Polls, err)
	}
	if n := seen["GET /apis/databases.example.com/v1/namespaces/"+ns+"/postgresclusters/"+l.Target.Cluster]; n != rep.Results[0].Polls {
		t.Errorf("a check polled %d times read the PostgresCluster %d times, want once a poll", rep.Results[0].Polls, n)
	}
}
