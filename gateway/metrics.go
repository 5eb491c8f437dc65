package gateway

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/cqlpg/cqlpg/gateway/advise"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/cqlwire"
	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/gateway/repair"
	"github.com/cqlpg/cqlpg/sharding"
)

// metrics are the gateway's Prometheus metrics, registered on a registry
// of the server's own so that several servers can live in one process.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	// byOpcode holds requests' counter of each known opcode, looked up
	// once rather than by label on every request.
	byOpcode    [256]prometheus.Counter
	errors      *prometheus.CounterVec
	connections prometheus.Gauge
	// shardUp is 1 per shard taken to be up, 0 while it is down.
	shardUp *prometheus.GaugeVec
	// sweep counts the sweeper's work, by shard.
	sweep sweepMetrics
	// latency times requests by the kind of statement they run (observe.go),
	// read into histograms when scraped: observing is two atomic additions.
	latency [exec.NumKinds]sharding.Latency
	// slow is the slow-request log's threshold, the longest duration
	// when the log is off, so that a request pays one comparison.
	slow time.Duration
	// repair is the progress of the current or last repair.
	repair repair.Status
	// stream counts the replication changes this gateway streams.
	stream repair.StreamStatus
	// cluster is the gateway's shards, once open, for the shard pools'
	// metrics.
	cluster atomic.Pointer[cluster.Cluster]
	// advice counts the advisor's findings of its last pass, by kind.
	advice *prometheus.GaugeVec
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
		shardUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cqlpg_shard_up", Help: "1 while the shard is taken to be up, 0 while it is down."},
			[]string{"shard"}),
		advice: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "cqlpg_advisor_findings", Help: "Findings of the advisor's last pass over every table, by kind (cqlpg advise, /ui/advice)."},
			[]string{"kind"}),
	}
	for _, k := range advise.Kinds {
		m.advice.WithLabelValues(k)
	}
	m.slow = s.cfg.SlowQuery
	if m.slow <= 0 {
		m.slow = math.MaxInt64
	}
	m.registry.MustRegister(m.requests, m.errors, m.connections, m.shardUp, m.advice,
		requestCollector{m}, shardCollector{m}, repairCollector{&m.repair}, streamCollector{&m.stream}, topologyCollector{m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cqlpg_prepared_statements",
			Help: "Statements in the plan cache."}, func() float64 { return float64(s.env.Cache.Len()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cqlpg_schema_unloadable_objects",
			Help: "Catalog objects (keyspaces, types, tables) the last schema load left out; the log and /readyz name them."},
			func() float64 {
				c := m.cluster.Load()
				if c == nil || c.Schema() == nil {
					return 0
				}
				return float64(len(c.Schema().Unloadable()))
			}))
	m.sweep = newSweepMetrics(m.registry)
	s.env.Metrics = exec.NewMetrics(m.registry)
	for op, name := range cqlwire.OpNames {
		m.byOpcode[op] = m.requests.WithLabelValues(name)
	}
	return m
}

// request counts a request of opcode op.
func (m *metrics) request(op byte) {
	if c := m.byOpcode[op]; c != nil {
		c.Inc()
		return
	}
	m.requests.WithLabelValues(cqlwire.OpNames[op]).Inc()
}

// sweepMetrics count what the sweeper's passes did on each shard.
type sweepMetrics struct {
	rowsPurged, cellsExpired, markersExpired, batches, skipped, errors *prometheus.CounterVec
	passSeconds                                                        *prometheus.HistogramVec
}

// record counts a shard's sweeper pass.
func (m sweepMetrics) record(st repair.SweepStats) {
	m.rowsPurged.WithLabelValues(st.Shard).Add(float64(st.RowsPurged))
	m.cellsExpired.WithLabelValues(st.Shard).Add(float64(st.CellsExpired))
	m.markersExpired.WithLabelValues(st.Shard).Add(float64(st.MarkersExpired))
	m.batches.WithLabelValues(st.Shard).Add(float64(st.Batches))
	m.skipped.WithLabelValues(st.Shard).Add(float64(st.Skipped))
	m.passSeconds.WithLabelValues(st.Shard).Observe(st.Duration.Seconds())
	if st.Err != nil {
		m.errors.WithLabelValues(st.Shard).Inc()
	}
}

func newSweepMetrics(r *prometheus.Registry) sweepMetrics {
	counter := func(name, help string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"shard"})
		r.MustRegister(c)
		return c
	}
	m := sweepMetrics{
		rowsPurged:     counter("cqlpg_sweep_rows_purged_total", "Rows deleted by the sweeper: nothing live, nothing newer than gc_grace_seconds."),
		cellsExpired:   counter("cqlpg_sweep_cells_expired_total", "Expired cells the sweeper turned into tombstones."),
		markersExpired: counter("cqlpg_sweep_markers_expired_total", "Expired row markers the sweeper dropped after gc_grace_seconds."),
		batches:        counter("cqlpg_sweep_batches_total", "Sweeper statements run."),
		skipped:        counter("cqlpg_sweep_skipped_total", "Tables a sweeper pass left for later: dropped, changed or locked."),
		errors:         counter("cqlpg_sweep_errors_total", "Sweeper passes stopped by an error."),
		passSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cqlpg_sweep_pass_seconds",
			Help: "Duration of a sweeper pass on a shard.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)},
			[]string{"shard"}),
	}
	r.MustRegister(m.passSeconds)
	return m
}
