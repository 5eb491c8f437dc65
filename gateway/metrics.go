package gateway

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the gateway's Prometheus metrics, registered on a registry
// of the server's own so that several servers can live in one process.
type metrics struct {
	registry    *prometheus.Registry
	requests    *prometheus.CounterVec
	errors      *prometheus.CounterVec
	connections prometheus.Gauge
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cqlpg_requests_total", Help: "CQL requests received, by opcode."}, []string{"opcode"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cqlpg_errors_total", Help: "CQL error responses, by error code."}, []string{"code"}),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "cqlpg_connections", Help: "Open client connections."}),
	}
	m.registry.MustRegister(m.requests, m.errors, m.connections,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cqlpg_prepared_statements",
			Help: "Statements in the plan cache."}, func() float64 { return float64(s.cache.len()) }))
	return m
}
