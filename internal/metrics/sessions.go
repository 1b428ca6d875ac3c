package metrics

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// SessionCounter counts sessions by state (store.DB does).
type SessionCounter interface {
	CountSessions(ctx context.Context) (map[string]int, error)
}

// sessionCollector reads the number of sessions in each state from the
// store at each scrape, so the figure is right after a restart and across
// processes (the CLI's sessions included), with nothing to keep in step.
type sessionCollector struct {
	desc    *prometheus.Desc
	src     SessionCounter
	states  []string
	timeout time.Duration
}

func newSessionCollector(src SessionCounter, states []string, timeout time.Duration) *sessionCollector {
	return &sessionCollector{
		desc:    prometheus.NewDesc("oplab_sessions", "Sessions in each state, as stored.", []string{"state"}, nil),
		src:     src,
		states:  states,
		timeout: timeout,
	}
}

func (c *sessionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *sessionCollector) Collect(ch chan<- prometheus.Metric) {
	// Collect has no context of its own: a scrape is where the call chain
	// begins, and the timeout keeps a slow store from holding it.
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	counts, err := c.src.CountSessions(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	all := map[string]int{}
	maps.Copy(all, counts)
	for _, s := range c.states {
		all[s] += 0
	}
	for _, s := range slices.Sorted(maps.Keys(all)) {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(all[s]), s)
	}
}
