package gateway

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/gateway/repair"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Metrics read when scraped: the requests' latencies by kind, the shard
// pools' counters and the progress of repairs. What they count is kept in
// atomic counters by the code that does the work, which never calls into
// Prometheus for them.

var (
	descRequestSeconds = prometheus.NewDesc("cqlpg_request_duration_seconds",
		"Time from a request's arrival to its answer being queued, by the kind of statement it ran.", []string{"kind"}, nil)
	descStatements = prometheus.NewDesc("cqlpg_statements_total",
		"Requests answered, by the kind of statement they ran (none: no statement).", []string{"kind"}, nil)

	descPipelineSeconds = prometheus.NewDesc("cqlpg_shard_pipeline_seconds",
		"Round trip of a pipeline of statements sent to a shard on one connection.", []string{"shard"}, nil)
	descShardOps = prometheus.NewDesc("cqlpg_shard_ops_total",
		"Ops (statements, or transactions of several) finished on a shard.", []string{"shard"}, nil)
	descShardOpErrors = prometheus.NewDesc("cqlpg_shard_op_errors_total",
		"Ops finished with an error: the shard's, or its connection's, or refused while it is down.", []string{"shard"}, nil)
	descShardQueued = prometheus.NewDesc("cqlpg_shard_ops_queued",
		"Ops waiting for a connection to the shard.", []string{"shard"}, nil)
	descShardOpen = prometheus.NewDesc("cqlpg_shard_connections_open",
		"Data connections open to the shard.", []string{"shard"}, nil)
	descShardBusy = prometheus.NewDesc("cqlpg_shard_connections_busy",
		"Data connections running a pipeline on the shard.", []string{"shard"}, nil)
	descShardMax = prometheus.NewDesc("cqlpg_shard_connections_max",
		"Data connections the gateway may open to the shard.", []string{"shard"}, nil)
	descShardState = prometheus.NewDesc("cqlpg_shard_state",
		"1 for the shard's state on the ring the gateway serves: normal, joining (a pending replica of the ranges it takes) or leaving.",
		[]string{"shard", "state"}, nil)
	descRingVersion = prometheus.NewDesc("cqlpg_ring_version",
		"The ring version the gateway serves (cqlpg.ring_version); it moves with every membership change.", nil, nil)

	descRepairRunning = prometheus.NewDesc("cqlpg_repair_running",
		"1 while a repair runs in this process.", nil, nil)
	descRepairs = prometheus.NewDesc("cqlpg_repairs_total",
		"Repairs started in this process.", nil, nil)
	descRepairStarted = prometheus.NewDesc("cqlpg_repair_started_timestamp_seconds",
		"When the current or last repair started, in seconds since the epoch.", nil, nil)
	descRepairRanges = prometheus.NewDesc("cqlpg_repair_ranges",
		"Token ranges the current or last repair covers, once per table.", nil, nil)
	descRepairRangesDone = prometheus.NewDesc("cqlpg_repair_ranges_done",
		"Token ranges the current or last repair has done.", nil, nil)
	descRepairRangesDiffered = prometheus.NewDesc("cqlpg_repair_ranges_differed",
		"Token ranges done whose replicas differed.", nil, nil)
	descRepairRows = prometheus.NewDesc("cqlpg_repair_rows_moved",
		"Rows the current or last repair sent to replicas, once per replica.", nil, nil)
)

// histogram turns a latency snapshot into a Prometheus histogram.
func histogram(desc *prometheus.Desc, s sharding.LatencySnapshot, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, sharding.LatencyBuckets-1)
	var n uint64
	for i, c := range s.Counts {
		n += c
		if i < sharding.LatencyBuckets-1 {
			buckets[sharding.LatencyBound(i).Seconds()] = n
		}
	}
	return prometheus.MustNewConstHistogram(desc, n, s.Sum.Seconds(), buckets, labels...)
}

// requestCollector reads the requests' latencies.
type requestCollector struct{ m *metrics }

func (c requestCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descRequestSeconds
	ch <- descStatements
}

func (c requestCollector) Collect(ch chan<- prometheus.Metric) {
	for k := range exec.NumKinds {
		s := c.m.latency[k].Snapshot()
		ch <- histogram(descRequestSeconds, s, k.String())
		ch <- prometheus.MustNewConstMetric(descStatements, prometheus.CounterValue, float64(s.Count()), k.String())
	}
}

// shardCollector reads the shard pools' counters, for the shards of the
// current topology.
type shardCollector struct{ m *metrics }

func (c shardCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPipelineSeconds, descShardOps, descShardOpErrors, descShardQueued,
		descShardOpen, descShardBusy, descShardMax, descShardState, descRingVersion} {
		ch <- d
	}
}

func (c shardCollector) Collect(ch chan<- prometheus.Metric) {
	cl := c.m.cluster.Load()
	if cl == nil {
		return // the gateway is still opening its shards
	}
	topo := cl.Topology()
	ch <- prometheus.MustNewConstMetric(descRingVersion, prometheus.GaugeValue, float64(cl.RingVersion()))
	for i, sh := range topo.Shards {
		s, name := sh.Pool.Stats(), sh.Info.Name
		ch <- prometheus.MustNewConstMetric(descShardState, prometheus.GaugeValue, 1, name, topo.State(i))
		gauge := func(d *prometheus.Desc, v int) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), name)
		}
		ch <- histogram(descPipelineSeconds, s.Pipelines, name)
		ch <- prometheus.MustNewConstMetric(descShardOps, prometheus.CounterValue, float64(s.Ops), name)
		ch <- prometheus.MustNewConstMetric(descShardOpErrors, prometheus.CounterValue, float64(s.Failed), name)
		gauge(descShardQueued, s.Queued)
		gauge(descShardOpen, s.Open)
		gauge(descShardBusy, s.Busy)
		gauge(descShardMax, s.Conns)
	}
}

var (
	descTopoMoving = prometheus.NewDesc("cqlpg_topology_moving",
		"1 while the ring the gateway serves has ranges moving or holds counter updates and lightweight transactions (a topology operation runs).", nil, nil)
	descTopoRanges = prometheus.NewDesc("cqlpg_topology_stream_ranges",
		"Ranges of tables the last topology operation streams, as its command reports them.", []string{"operation"}, nil)
	descTopoRangesDone = prometheus.NewDesc("cqlpg_topology_stream_ranges_done",
		"Ranges the last topology operation has streamed.", []string{"operation"}, nil)
	descTopoRows = prometheus.NewDesc("cqlpg_topology_stream_rows",
		"Rows the last topology operation has streamed.", []string{"operation"}, nil)
	descTopoBytes = prometheus.NewDesc("cqlpg_topology_stream_bytes",
		"Bytes the last topology operation has streamed.", []string{"operation"}, nil)
	descTopoUpdated = prometheus.NewDesc("cqlpg_topology_stream_updated_seconds",
		"When the last topology operation last reported its streaming, in seconds since the epoch.", []string{"operation"}, nil)
)

// topologyCollector reads the ring's movement from the gateway and the
// last topology operation's streaming from a member's
// cqlpg.topology_progress, which the command that runs it writes.
type topologyCollector struct{ m *metrics }

func (c topologyCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTopoMoving, descTopoRanges, descTopoRangesDone, descTopoRows, descTopoBytes, descTopoUpdated} {
		ch <- d
	}
}

func (c topologyCollector) Collect(ch chan<- prometheus.Metric) {
	cl := c.m.cluster.Load()
	if cl == nil {
		return
	}
	topo, control := cl.Snapshot()
	moving := 0.0
	if topo.Next != nil || topo.Held {
		moving = 1
	}
	ch <- prometheus.MustNewConstMetric(descTopoMoving, prometheus.GaugeValue, moving)
	for i, pool := range control {
		if !topo.Shards[i].Pool.Alive() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		p, err := pgschema.LoadTopologyProgress(ctx, pool)
		cancel()
		if err != nil {
			continue
		}
		if p != nil {
			gauge := func(d *prometheus.Desc, v float64) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, p.Operation)
			}
			gauge(descTopoRanges, float64(p.RangesTotal))
			gauge(descTopoRangesDone, float64(p.RangesDone))
			gauge(descTopoRows, float64(p.Rows))
			gauge(descTopoBytes, float64(p.Bytes))
			gauge(descTopoUpdated, float64(p.UpdatedAt.UnixNano())/1e9)
		}
		return
	}
}

var (
	descStreamRows = prometheus.NewDesc("cqlpg_stream_rows_total",
		"Rows this gateway streamed to the replicas a keyspace's replication change adds.", nil, nil)
	descStreamPending = prometheus.NewDesc("cqlpg_stream_ranges_pending",
		"Ranges of tables the replication change this gateway streams has yet to stream.", nil, nil)
	descStreamRunning = prometheus.NewDesc("cqlpg_stream_running",
		"1 while this gateway streams a replication change.", nil, nil)
)

// streamCollector reads the streaming status.
type streamCollector struct{ s *repair.StreamStatus }

func (c streamCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descStreamRows
	ch <- descStreamPending
	ch <- descStreamRunning
}

func (c streamCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descStreamRows, prometheus.CounterValue, float64(c.s.Rows.Load()))
	ch <- prometheus.MustNewConstMetric(descStreamPending, prometheus.GaugeValue, float64(c.s.RangesPending.Load()))
	running := 0.0
	if c.s.Running.Load() {
		running = 1
	}
	ch <- prometheus.MustNewConstMetric(descStreamRunning, prometheus.GaugeValue, running)
}

// repairCollector reads the repair status.
type repairCollector struct{ r *repair.Status }

func (c repairCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRepairRunning, descRepairs, descRepairStarted, descRepairRanges,
		descRepairRangesDone, descRepairRangesDiffered, descRepairRows} {
		ch <- d
	}
}

func (c repairCollector) Collect(ch chan<- prometheus.Metric) {
	runs, running, started, p := c.r.Snapshot()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	if running {
		gauge(descRepairRunning, 1)
	} else {
		gauge(descRepairRunning, 0)
	}
	ch <- prometheus.MustNewConstMetric(descRepairs, prometheus.CounterValue, float64(runs))
	if !started.IsZero() {
		gauge(descRepairStarted, float64(started.UnixNano())/1e9)
	}
	gauge(descRepairRanges, float64(p.RangesTotal))
	gauge(descRepairRangesDone, float64(p.RangesDone))
	gauge(descRepairRangesDiffered, float64(p.RangesRepaired))
	gauge(descRepairRows, float64(p.RowsMoved))
}
