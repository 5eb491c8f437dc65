package exec

import "github.com/prometheus/client_golang/prometheus"

// Metrics count what executions and the replayers do beside answering
// requests, on the gateway's registry.
type Metrics struct {
	// BatchlogWrites counts batches written to the batch log, and
	// batchlogReplays the records replayed, by result: applied or dropped.
	BatchlogWrites  prometheus.Counter
	BatchlogReplays *prometheus.CounterVec
	// HintsWritten counts hints stored for replicas that missed a write,
	// hintsReplayed those replayed, by result.
	HintsWritten  prometheus.Counter
	hintsReplayed *prometheus.CounterVec
	// hintsPending counts hints waiting on the shards, by target shard, as
	// the hint replayer last found them.
	hintsPending *prometheus.GaugeVec
	// ReadRepairs counts reads whose replicas disagreed and were repaired.
	ReadRepairs prometheus.Counter
	// PaxosContentions counts the Paxos rounds of lightweight
	// transactions lost to another round, and PaxosReplays the proposals
	// of unfinished rounds that later rounds completed.
	PaxosContentions, PaxosReplays prometheus.Counter
	// SpeculativeReads counts replicas asked because one asked before had
	// not answered within the table's speculative_retry.
	SpeculativeReads prometheus.Counter
	// ViewUpdates counts view log entries applied to every replica of
	// their view partition; ViewBuildRows the base rows view builds
	// logged.
	ViewUpdates, ViewBuildRows prometheus.Counter
}

func NewMetrics(r *prometheus.Registry) *Metrics {
	m := &Metrics{
		BatchlogWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cqlpg_batchlog_writes_total", Help: "LOGGED batches written to the batch log."}),
		BatchlogReplays: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cqlpg_batchlog_replays_total", Help: "Batch log records replayed, by result (applied or dropped)."},
			[]string{"result"}),
		HintsWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cqlpg_hints_written_total", Help: "Hints stored for replicas that missed a write."}),
		hintsReplayed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cqlpg_hints_replayed_total", Help: "Hints replayed, by result (applied or dropped)."},
			[]string{"result"}),
		hintsPending: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cqlpg_hints_pending",
			Help: "Hints waiting on the shards for a replica, by target shard, as the hint replayer last counted them."},
			[]string{"shard"}),
		SpeculativeReads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cqlpg_speculative_reads_total",
			Help: "Replicas asked because one asked before had not answered within the table's speculative_retry."}),
		ReadRepairs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cqlpg_read_repairs_total", Help: "Reads whose replicas disagreed and were repaired before the answer."}),
		PaxosContentions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cqlpg_paxos_contentions_total", Help: "Paxos rounds of lightweight transactions lost to another round."}),
		PaxosReplays: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cqlpg_paxos_replays_total", Help: "Accepted proposals of unfinished Paxos rounds that a later round committed."}),
		ViewUpdates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cqlpg_view_updates_total", Help: "Materialized view updates applied to every replica of their view partition."}),
		ViewBuildRows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cqlpg_view_build_rows_total", Help: "Base rows that materialized view builds logged as view updates."}),
	}
	r.MustRegister(m.BatchlogWrites, m.BatchlogReplays, m.HintsWritten, m.hintsReplayed, m.hintsPending, m.ReadRepairs,
		m.PaxosContentions, m.PaxosReplays, m.SpeculativeReads, m.ViewUpdates, m.ViewBuildRows)
	// Known label values start at zero, so that their rates exist before
	// the first event.
	for _, result := range []string{"applied", "dropped"} {
		m.hintsReplayed.WithLabelValues(result)
		m.BatchlogReplays.WithLabelValues(result)
	}
	return m
}
