package controller

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	pgv1 "oplab.dev/oplab/api/v1"
)

// Metrics are the operator's own Prometheus metrics, served beside
// controller-runtime's on /metrics. A nil *Metrics records nothing.
type Metrics struct {
	failovers *prometheus.CounterVec
	duration  prometheus.Histogram
	desired   *prometheus.GaugeVec
	ready     *prometheus.GaugeVec
}

// NewMetrics makes the metrics and registers them with reg; metrics that
// reg already holds (a second manager in one process) are reused.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		failovers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pg_operator_failovers_total",
			Help: "Failovers completed: a replica promoted because the primary failed.",
		}, []string{"namespace", "cluster"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "pg_operator_failover_duration_seconds",
			Help:    "Time from noticing the primary unavailable to the new primary being labelled.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30, 60},
		}),
		desired: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pg_operator_desired_replicas",
			Help: "Instances asked for in spec.replicas.",
		}, []string{"namespace", "cluster"}),
		ready: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pg_operator_ready_replicas",
			Help: "Instances whose pod is ready.",
		}, []string{"namespace", "cluster"}),
	}
	var err error
	m.failovers = register(reg, m.failovers, &err)
	m.duration = register(reg, m.duration, &err)
	m.desired = register(reg, m.desired, &err)
	m.ready = register(reg, m.ready, &err)
	return m, err
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C, errp *error) C {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	if err != nil && *errp == nil {
		*errp = err
	}
	return c
}

func (m *Metrics) observe(pgc *pgv1.PostgresCluster) {
	if m == nil {
		return
	}
	m.desired.WithLabelValues(pgc.Namespace, pgc.Name).Set(float64(pgc.Spec.Replicas))
	m.ready.WithLabelValues(pgc.Namespace, pgc.Name).Set(float64(pgc.Status.ReadyReplicas))
}

func (m *Metrics) failedOver(pgc *pgv1.PostgresCluster, took time.Duration) {
	if m == nil {
		return
	}
	m.failovers.WithLabelValues(pgc.Namespace, pgc.Name).Inc()
	m.duration.Observe(took.Seconds())
}

// forget drops the series of a deleted cluster.
func (m *Metrics) forget(namespace, name string) {
	if m == nil {
		return
	}
	m.desired.DeleteLabelValues(namespace, name)
	m.ready.DeleteLabelValues(namespace, name)
}
