package metrics

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options configure the metrics.
type Options struct {
	// Sessions counts sessions by state at each scrape (store.DB);
	// without it oplab_sessions is not reported.
	Sessions SessionCounter
	// States are reported even when no session is in them, so a graph of
	// a state starts at zero rather than with a gap.
	States []string
	// Timeout bounds the store query of a scrape; DefaultTimeout when zero.
	Timeout time.Duration
	// Queued says how many starts wait for room on the machine (the
	// admission queue); without it oplab_admission_queue is not reported.
	Queued func() int
	// Logger receives scrape errors; discarded when nil.
	Logger *slog.Logger
}

// DefaultTimeout bounds the store query of one scrape.
const DefaultTimeout = 2 * time.Second

// Metrics is oplab's registry and the metrics in it.
type Metrics struct {
	reg          *prometheus.Registry
	log          *slog.Logger
	provisioning *prometheus.HistogramVec
	checks       *prometheus.HistogramVec
	warmPool     *prometheus.GaugeVec
	wsClients    *prometheus.GaugeVec
	console      *prometheus.CounterVec
	refusals     *prometheus.CounterVec
}

// New registers oplab's metrics in a registry of their own.
func New(o Options) *Metrics {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		log: log,
		provisioning: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "oplab_provisioning_duration_seconds",
			Help: "Time to make a session ready: cluster, operator and lab setup.",
			// 0.25 s (a warm start) to about 2 minutes (a cold one on a
			// busy machine).
			Buckets: prometheus.ExponentialBuckets(0.25, 2, 10),
		}, []string{"provider", "outcome"}),
		checks: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "oplab_check_duration_seconds",
			Help:    "Time to grade an exercise's goals when a learner presses Check.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 10), // 50 ms to about 25 s
		}, []string{"lab", "outcome"}),
		warmPool: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "oplab_warm_pool_clusters",
			Help: "Ready clusters waiting in the warm pool.",
		}, []string{"provider", "lab"}),
		wsClients: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "oplab_websocket_clients",
			Help: "Open WebSocket connections.",
		}, []string{"stream"}),
		console: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "oplab_console_commands_total",
			Help: "Commands sent to the web console, by outcome.",
		}, []string{"outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "oplab_refusals_total",
			Help: "Requests refused, by reason.",
		}, []string{"reason"}),
	}
	m.reg.MustRegister(m.provisioning, m.checks, m.warmPool, m.wsClients, m.console, m.refusals,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if o.Sessions != nil {
		timeout := o.Timeout
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		m.reg.MustRegister(newSessionCollector(o.Sessions, o.States, timeout))
	}
	if o.Queued != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "oplab_admission_queue",
			Help: "Starts waiting for room on the machine for their cluster.",
		}, func() float64 { return float64(o.Queued()) }))
	}
	return m
}

// Handler serves the registry in the Prometheus text format. A collector
// that fails (the store is unreachable) leaves its metric out and the
// rest is served.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(m.log.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg,
	})
}

// Registry is the registry, for a caller that adds collectors of its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }
