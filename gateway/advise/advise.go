// Package advise looks at the data the shards hold and reports where a
// table breaks the seeds' data modelling rules: partitions too large,
// partition keys of few values or one hot value, shards holding a share
// of a table far from their share of the ring, keys that count rows, and
// partitions heavy with deletions or expired rows waiting for the
// sweeper. Each finding carries its evidence, the rule it breaks and what
// to do.
//
// It reads Postgres's statistics first (pg_stats of each table's _token,
// the most common partitions and their frequencies, made by ANALYZE when
// a table has none), and samples rows (TABLESAMPLE) only for what
// statistics do not tell; every statement runs under a statement timeout,
// so a pass is bounded in time whatever a table's size. It imports
// cluster, pgschema and sharding, never the gateway.
package advise

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Finding kinds.
const (
	KindLargePartition  = "large_partition"
	KindFewKeys         = "few_partition_keys"
	KindHotKey          = "hot_partition_key"
	KindShardSkew       = "shard_skew"
	KindMonotonicKey    = "monotonic_key"
	KindTombstones      = "tombstone_heavy"
	KindExpiredWaiting  = "expired_rows_waiting"
	KindHotTraffic      = "hot_partition_traffic"
	KindFilteringQuery  = "filtering_query"
	KindIndexQuery      = "index_query"
	defaultStmtTimeout  = 5 * time.Second
	defaultPartitionMax = 100 << 20
	defaultPartitionWrn = 10 << 20
)

// Kinds lists the finding kinds, for metrics that count each from zero.
var Kinds = []string{KindLargePartition, KindFewKeys, KindHotKey, KindShardSkew, KindMonotonicKey, KindTombstones, KindExpiredWaiting,
	KindHotTraffic, KindFilteringQuery, KindIndexQuery}

// QueryStats are a gateway's executions of a prepared SELECT that filters
// rows (ALLOW FILTERING) or reads through a secondary index.
type QueryStats struct {
	Keyspace, Table, Query string
	Filtering              bool
	Index                  string
	Executions, Rows       int64
	Since                  time.Time
}

// HotPartition is a partition that sampled requests asked for often (a
// gateway's sampler): Share is its part of the sampled requests to its
// table.
type HotPartition struct {
	Keyspace, Table string
	Token           int64
	Sampled         int
	Share           float64
}

// Options are the advisor's thresholds and bounds; zero values take the
// defaults.
type Options struct {
	// Keyspace and Table narrow the pass: one table, a keyspace, or all.
	Keyspace, Table string
	// PartitionLimit is the size past which a partition is a finding
	// (100 MB); PartitionWarn the size of a warning (10 MB).
	PartitionLimit, PartitionWarn int64
	// FewKeys is the count of distinct partition keys below which a table
	// with more rows than MinRows has too few (10); HotShare the share of
	// a table's rows one partition may hold (0.1).
	FewKeys  int
	HotShare float64
	MinRows  int64
	// ShardSkew is how far a shard's share of a table may stray from its
	// share of the ring, relatively (0.5: from half to one and a half).
	ShardSkew float64
	// StatementTimeout bounds each statement on a shard (5 s).
	StatementTimeout time.Duration
	// Duty is the share of its time a pass spends on the shards, between
	// 0 and 1: after each table's statements, it waits long enough for
	// their time to be that share (1 when zero: no wait). A gateway's
	// background pass runs at 0.1, so that it barely shows in the
	// latency of the requests it runs beside.
	Duty float64
	// Exact measures the largest partitions by reading every row of each
	// table (under StatementTimeout, after which the estimate stands)
	// rather than estimating them from statistics.
	Exact bool
	// Traffic are the partitions a gateway's requests asked for most, by
	// sample; one with at least HotShare of its table's samples, and 20
	// samples, is a finding.
	Traffic []HotPartition
	// Queries are a gateway's filtering and indexed queries, each a
	// finding.
	Queries []QueryStats
}

func (o *Options) defaults() {
	o.PartitionLimit = cmp.Or(o.PartitionLimit, defaultPartitionMax)
	o.PartitionWarn = cmp.Or(o.PartitionWarn, defaultPartitionWrn)
	o.FewKeys = cmp.Or(o.FewKeys, 10)
	o.HotShare = cmp.Or(o.HotShare, 0.1)
	o.MinRows = cmp.Or(o.MinRows, 1000)
	o.ShardSkew = cmp.Or(o.ShardSkew, 0.5)
	o.StatementTimeout = cmp.Or(o.StatementTimeout, defaultStmtTimeout)
}

// Finding is one place a table breaks a rule.
type Finding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"` // "warning" or "problem"
	Keyspace string `json:"keyspace"`
	Table    string `json:"table"`
	// Evidence is what was measured; Rule the seeds' rule; Advice what to
	// do.
	Evidence string `json:"evidence"`
	Rule     string `json:"rule"`
	Advice   string `json:"advice"`
}

// Report is one pass over the tables.
type Report struct {
	Tables   int           `json:"tables"`
	Findings []Finding     `json:"findings"`
	Took     time.Duration `json:"took_ns"`
	// Skipped names the shards or tables that could not be read, with why.
	Skipped []string `json:"skipped,omitempty"`
}

// tableStats is what the shards' statistics say of one table.
type tableStats struct {
	rows, bytes  float64
	perShard     []float64 // rows per shard
	distinct     float64   // distinct partitions, summed over the shards
	rf           float64   // the replicas of each partition, on average
	top          []partitionShare
	correlation  float64 // of the first partition key column with the heap order, on the shard holding most rows
	deadRows     float64 // rows holding nothing live, sampled
	expiredRows  float64 // rows whose cells expired, not yet swept, sampled
	sampledRows  float64
	monotonicKey bool
	exact        bool // the partition sizes were measured
	// rangeDeletions are the partitions with the most partition and range
	// deletions recorded (t$deletions).
	rangeDeletions []partitionShare
	// perValue is, by index name, the rows one value of the indexed
	// column matches, summed over the shards (replicas included): what an
	// index lookup reads.
	perValue map[string]float64
}

// mergeTop adds partitions to a list of the largest, a partition on
// several replicas counted once.
func mergeTop(top, more []partitionShare) []partitionShare {
	for _, p := range more {
		if j := slices.IndexFunc(top, func(o partitionShare) bool { return o.token == p.token }); j >= 0 {
			top[j] = partitionShare{token: p.token, rows: max(top[j].rows, p.rows), bytes: max(top[j].bytes, p.bytes)}
			continue
		}
		top = append(top, p)
	}
	return top
}

// partitionShare is one of a shard's most common partitions: its rows
// and bytes there.
type partitionShare struct {
	token       int64
	rows, bytes float64
}

// Run makes one pass over the tables opts names.
func Run(ctx context.Context, c *cluster.Cluster, opts Options) (*Report, error) {
	opts.defaults()
	began := time.Now()
	schema := c.Schema()
	topo, control := c.Snapshot()
	rep := &Report{}
	var tables []*pgschema.Table
	for _, k := range schema.Keyspaces() {
		if k.Virtual || pgschema.IsSystemKeyspace(k.Name) || opts.Keyspace != "" && k.Name != opts.Keyspace {
			continue
		}
		for _, name := range k.TableNames() {
			t := k.Tables[name]
			if opts.Table != "" && name != opts.Table || t.Virtual {
				continue
			}
			tables = append(tables, t)
		}
	}
	if opts.Keyspace != "" && len(tables) == 0 {
		return nil, fmt.Errorf("no table matches %s", strings.Trim(opts.Keyspace+"."+opts.Table, "."))
	}
	rep.Tables = len(tables)
	for _, t := range tables {
		k := schema.Keyspace(t.Keyspace)
		placement := topo.Placement(k.Replication)
		st := &tableStats{perShard: make([]float64, len(control)), rf: float64(max(1, k.Replication.Factor))}
		if f := k.Replication.DCFactors; len(f) > 0 {
			st.rf = 0
			for _, n := range f {
				st.rf += float64(n)
			}
			st.rf = max(st.rf, 1)
		}
		for i, pool := range control {
			if !topo.Shards[i].Pool.Alive() {
				rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s on %s: the shard is down", t.QualifiedName(), topo.Shards[i].Info.Name))
				continue
			}
			began := time.Now()
			if err := readShard(ctx, pool, t, st, i, opts); err != nil {
				rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s on %s: %v", t.QualifiedName(), topo.Shards[i].Info.Name, err))
			}
			if opts.Duty > 0 && opts.Duty < 1 {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(time.Duration(float64(time.Since(began)) * (1 - opts.Duty) / opts.Duty)):
				}
			}
		}
		// A shard's expected share of a table is its share of the ring's
		// replicas under the keyspace's replication.
		shares := make([]float64, len(control))
		for r := range topo.Ring.Tokens() {
			for _, s := range placement.RangeReplicas(r) {
				shares[s] += topo.Ring.RangeShare(r)
			}
		}
		rep.Findings = append(rep.Findings, judge(t, st, shares, topo.Shards, opts)...)
		for _, q := range opts.Queries {
			if q.Keyspace == t.Keyspace && q.Table == t.Name {
				rep.Findings = append(rep.Findings, queryFinding(q, st))
			}
		}
		for _, h := range opts.Traffic {
			if h.Keyspace == t.Keyspace && h.Table == t.Name && h.Share >= opts.HotShare && h.Sampled >= 20 {
				rep.Findings = append(rep.Findings, Finding{Kind: KindHotTraffic, Severity: "warning", Keyspace: t.Keyspace, Table: t.Name,
					Evidence: fmt.Sprintf("partition token %d took %.0f%% of the sampled requests to the table (%d samples)", h.Token, 100*h.Share, h.Sampled),
					Rule:     ruleCardinality,
					Advice:   "Spread the requests: a bucket in the partition key, or a cache in front of a partition read far more than the others."})
			}
		}
	}
	slices.SortStableFunc(rep.Findings, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.Keyspace, b.Keyspace), strings.Compare(a.Table, b.Table), strings.Compare(a.Kind, b.Kind))
	})
	rep.Took = time.Since(began)
	return rep, nil
}

// readShard adds what one shard's statistics and a sample say of t.
func readShard(ctx context.Context, pool *pgxpool.Pool, t *pgschema.Table, st *tableStats, shard int, opts Options) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", opts.StatementTimeout.Milliseconds())); err != nil {
			return err
		}
		var rows, bytes float64
		var analyzed bool
		err := tx.QueryRow(ctx, `SELECT greatest(c.reltuples, 0), pg_total_relation_size(c.oid),
			coalesce(s.last_analyze, s.last_autoanalyze) IS NOT NULL
			FROM pg_class c LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid WHERE c.oid = $1::regclass`, t.Ident()).Scan(&rows, &bytes, &analyzed)
		if err != nil {
			return err
		}
		if !analyzed {
			// Statistics are the advisor's first source: a table that has
			// none gets them, from a bounded sample of its rows; Postgres's
			// autovacuum keeps them fresh after that.
			if _, err := tx.Exec(ctx, "ANALYZE "+t.Ident()); err != nil {
				return err
			}
			if err := tx.QueryRow(ctx, `SELECT greatest(reltuples, 0), pg_total_relation_size(oid) FROM pg_class WHERE oid = $1::regclass`,
				t.Ident()).Scan(&rows, &bytes); err != nil {
				return err
			}
		}
		st.rows += rows
		st.bytes += bytes
		st.perShard[shard] = rows
		var distinct float64
		var vals []int64
		var freqs []float32
		err = tx.QueryRow(ctx, `SELECT n_distinct, coalesce(most_common_vals::text::bigint[], '{}'), coalesce(most_common_freqs, '{}')
			FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = '_token'`, t.PGSchema, t.PGName).Scan(&distinct, &vals, &freqs)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // an empty table
		}
		if err != nil {
			return err
		}
		if distinct < 0 {
			distinct = -distinct * rows
		}
		st.distinct += distinct
		if opts.Exact {
			// Exact sizes, when the shard answers in time: every row read
			// once, the largest partitions kept.
			var exact []partitionShare
			xrows, _ := tx.Query(ctx, fmt.Sprintf(`SELECT x."_token", count(*), sum(pg_column_size(x.*)) FROM %s AS x
				GROUP BY x."_token" ORDER BY 3 DESC LIMIT 10`, t.Ident()))
			for xrows.Next() {
				var p partitionShare
				if err := xrows.Scan(&p.token, &p.rows, &p.bytes); err != nil {
					break
				}
				exact = append(exact, p)
			}
			xrows.Close()
			if xrows.Err() == nil && len(exact) > 0 {
				vals, freqs = nil, nil
				st.exact = true
				st.top = mergeTop(st.top, exact)
			}
		}
		estimated := make([]partitionShare, len(vals))
		for i, v := range vals {
			estimated[i] = partitionShare{token: v, rows: float64(freqs[i]) * rows, bytes: float64(freqs[i]) * bytes}
		}
		st.top = mergeTop(st.top, estimated)
		if pk := t.PartitionKey; len(pk) == 1 && isInteger(pk[0].Type) && rows >= float64(opts.MinRows) {
			var corr *float64
			var nd float64
			if err := tx.QueryRow(ctx, `SELECT correlation, n_distinct FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = $3`,
				t.PGSchema, t.PGName, pk[0].PGName).Scan(&corr, &nd); err == nil && corr != nil && math.Abs(*corr) > 0.9 && nd < -0.9 {
				st.monotonicKey = true
				st.correlation = *corr
			}
		}
		// What an index lookup reads: a shard's rows over the distinct
		// values of the indexed column. Collection indexes (keys, values,
		// entries) have no column statistics to tell.
		for _, idx := range t.Indexes {
			c := t.Column(idx.Target())
			if c == nil || rows == 0 {
				continue
			}
			var nd float64
			if err := tx.QueryRow(ctx, `SELECT n_distinct FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = $3`,
				t.PGSchema, t.PGName, c.PGName).Scan(&nd); err != nil {
				continue
			}
			if nd < 0 {
				nd = -nd * rows
			}
			if nd >= 1 {
				if st.perValue == nil {
					st.perValue = map[string]float64{}
				}
				st.perValue[idx.Name] += rows / nd
			}
		}
		if d := t.DeletionsIdent(); d != "" {
			drows, _ := tx.Query(ctx, fmt.Sprintf(`SELECT "_token", count(*) FROM %s GROUP BY "_token" ORDER BY 2 DESC LIMIT 3`, d))
			var found []partitionShare
			for drows.Next() {
				var p partitionShare
				if err := drows.Scan(&p.token, &p.rows); err != nil {
					break
				}
				found = append(found, p)
			}
			drows.Close()
			if err := drows.Err(); err != nil {
				return err
			}
			st.rangeDeletions = mergeTop(st.rangeDeletions, found)
		}
		// Rows that hold nothing live: deletions and expired data the
		// sweeper has not removed yet, from a 1% sample (all rows of a
		// small table).
		sample := "TABLESAMPLE SYSTEM (1)"
		if rows < 100000 {
			sample = ""
		}
		live := liveSQL(t)
		var n, dead, expired float64
		err = tx.QueryRow(ctx, fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE NOT (%s) AND x."_del_wt" IS NOT NULL),
			count(*) FILTER (WHERE NOT (%[1]s) AND x."_del_wt" IS NULL)
			FROM %s AS x %s`, live, t.Ident(), sample)).Scan(&n, &dead, &expired)
		if err != nil {
			return err
		}
		st.sampledRows += n
		st.deadRows += dead
		st.expiredRows += expired
		return nil
	})
}

// liveSQL is the condition that row x holds something live now.
func liveSQL(t *pgschema.Table) string {
	now := "extract(epoch from now())"
	or := []string{fmt.Sprintf(`(x."_row_wt" IS NOT NULL AND (x."_row_exp" IS NULL OR x."_row_exp" > %s))`, now)}
	for _, c := range t.Columns {
		if c.Kind == pgschema.Regular {
			or = append(or, fmt.Sprintf("(x.%s IS NOT NULL AND (x.%s IS NULL OR x.%[2]s > %s))", pgschema.Quote(c.PGName),
				pgschema.Quote(c.ExpiryColumn()), now))
		}
	}
	if len(t.Clustering) == 0 && len(or) == 1 && !slices.ContainsFunc(t.Columns, func(c *pgschema.Column) bool { return c.Kind == pgschema.Regular }) {
		return "true"
	}
	return strings.Join(or, " OR ")
}

func isInteger(t *pgschema.Type) bool {
	return t.Kind == pgschema.Int || t.Kind == pgschema.Bigint || t.Kind == pgschema.Smallint || t.Kind == pgschema.Varint
}

// The seeds' rules, as findings quote them.
const (
	rulePartitionSize = "Keep partitions under 100 MB: a partition lives whole on each of its replicas, and a large one is slow to read, repair and stream."
	ruleCardinality   = "Choose a partition key of high cardinality: a key of few values (a status) makes few partitions, each a hotspot on its replicas."
	ruleSpread        = "Data should spread over the ring as the tokens do: a shard holding much more than its share of a table is a hotspot."
	ruleCounterKeys   = "Prefer UUID or TimeUUID keys to counters of rows: an increasing number says nothing to the partitioner and invites read-before-write."
	ruleTombstones    = "Deleted and expired data stays until the sweeper removes it after gc_grace_seconds; tables written to be deleted pay for it on every read."
)

// judge turns a table's statistics into findings.
func judge(t *pgschema.Table, st *tableStats, shares []float64, shards []*sharding.Shard, opts Options) []Finding {
	var out []Finding
	add := func(kind, severity, evidence, rule, advice string) {
		out = append(out, Finding{Kind: kind, Severity: severity, Keyspace: t.Keyspace, Table: t.Name, Evidence: evidence, Rule: rule, Advice: advice})
	}
	slices.SortFunc(st.top, func(a, b partitionShare) int { return cmp.Compare(b.bytes, a.bytes) })
	// Each row is on rf shards: the table's rows, once each.
	rows := st.rows / st.rf
	share := func(p partitionShare) float64 { return p.rows / max(rows, 1) }
	if len(st.top) > 0 && st.top[0].bytes >= float64(opts.PartitionWarn) {
		var largest []string
		for _, p := range st.top[:min(3, len(st.top))] {
			largest = append(largest, fmt.Sprintf("token %d ≈ %s (%.0f%% of the table's rows)", p.token, sizeText(p.bytes), 100*share(p)))
		}
		severity := "warning"
		if st.top[0].bytes >= float64(opts.PartitionLimit) {
			severity = "problem"
		}
		how := "estimated from Postgres statistics"
		if st.exact {
			how = "measured"
		}
		add(KindLargePartition, severity, "largest partitions, "+how+": "+strings.Join(largest, "; "),
			rulePartitionSize, "Add a bucket (a day, a hash of something else) to the partition key, so that a partition holds a bounded slice.")
	}
	distinct := math.Round(st.distinct / st.rf)
	slices.SortFunc(st.top, func(a, b partitionShare) int { return cmp.Compare(b.rows, a.rows) })
	if rows >= float64(opts.MinRows) && distinct > 0 && distinct < float64(opts.FewKeys) {
		add(KindFewKeys, "problem", fmt.Sprintf("%.0f rows in %.0f distinct partitions", rows, distinct), ruleCardinality,
			"Key the table by something with many values (a user, a device), and keep the low-cardinality column as a clustering column or in another table.")
	} else if rows >= float64(opts.MinRows) && len(st.top) > 0 && share(st.top[0]) >= opts.HotShare {
		add(KindHotKey, "warning", fmt.Sprintf("one partition (token %d) holds %.0f%% of the table's rows", st.top[0].token, 100*share(st.top[0])),
			ruleCardinality, "Split that partition with a bucket in the key, or key the table by a column whose values share the rows evenly.")
	}
	var total, ring float64
	for i, n := range st.perShard {
		total += n
		ring += shares[i]
	}
	if total >= float64(opts.MinRows) && ring > 0 {
		var skewed []string
		for i, n := range st.perShard {
			want := shares[i] / ring
			got := n / total
			if want > 0 && math.Abs(got-want)/want > opts.ShardSkew {
				skewed = append(skewed, fmt.Sprintf("%s holds %.0f%% against %.0f%% of the ring", shards[i].Info.Name, 100*got, 100*want))
			}
		}
		if len(skewed) > 0 {
			add(KindShardSkew, "warning", strings.Join(skewed, "; "), ruleSpread,
				"A few large partitions cause this: spread them with a bucket in the partition key.")
		}
	}
	if st.monotonicKey {
		add(KindMonotonicKey, "warning", fmt.Sprintf("partition key %s is an integer that grows with the rows written (correlation %.2f with their order, every value distinct)",
			t.PartitionKey[0].Name, st.correlation), ruleCounterKeys, "Key the rows by a uuid or timeuuid the client makes.")
	}
	slices.SortFunc(st.rangeDeletions, func(a, b partitionShare) int { return cmp.Compare(b.rows, a.rows) })
	if len(st.rangeDeletions) > 0 && st.rangeDeletions[0].rows >= 100 {
		var parts []string
		for _, p := range st.rangeDeletions[:min(3, len(st.rangeDeletions))] {
			parts = append(parts, fmt.Sprintf("token %d: %.0f", p.token, p.rows))
		}
		add(KindTombstones, "warning", "partitions holding the most partition and range deletions: "+strings.Join(parts, "; "), ruleTombstones,
			"Each read of such a partition checks its deletions: bucket the partition by time, so that old slices are dropped whole, or let rows expire with a TTL.")
	}
	if st.sampledRows >= 100 {
		if share := st.deadRows / st.sampledRows; share >= 0.2 {
			add(KindTombstones, "warning", fmt.Sprintf("%.0f%% of the rows sampled are deletions holding nothing live", 100*share), ruleTombstones,
				"Model the data so that rows expire with a TTL, or are overwritten, rather than deleted one by one; lower gc_grace_seconds if repairs run more often.")
		}
		if share := st.expiredRows / st.sampledRows; share >= 0.2 {
			add(KindExpiredWaiting, "warning", fmt.Sprintf("%.0f%% of the rows sampled expired and wait for the sweeper", 100*share), ruleTombstones,
				"They are invisible already; the sweeper removes them. If they stay, check the gateways' cqlpg_sweep_* metrics.")
		}
	}
	return out
}

// sizeText is a byte count as people read it.
func sizeText(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}

const ruleIndexes = "Model tables on queries, and keep secondary indexes and ALLOW FILTERING for rare queries: each reads rows of many partitions, on every shard, for the few it returns."

// queryFinding reports a filtering or indexed query: its rate, the rows
// it returns, and the rows it reads for each one it returns: the rows an
// index lookup matches, or, for a filtering scan, the table's rows.
func queryFinding(q QueryStats, st *tableStats) Finding {
	secs := max(time.Since(q.Since).Seconds(), 1)
	perExec := float64(q.Rows) / float64(q.Executions)
	f := Finding{Severity: "warning", Keyspace: q.Keyspace, Table: q.Table, Rule: ruleIndexes,
		Advice: "Make a table keyed by what the query restricts, written beside this one, and read that partition instead."}
	evidence := fmt.Sprintf("%q: %d executions (%.2f a second), %.1f rows returned each", q.Query, q.Executions, float64(q.Executions)/secs, perExec)
	f.Kind = KindIndexQuery
	if q.Filtering {
		f.Kind = KindFilteringQuery
	}
	switch perValue, ok := st.perValue[q.Index]; {
	case q.Index != "" && ok:
		scanned := perValue / st.rf
		evidence += fmt.Sprintf(", through index %s, whose lookups match about %.0f rows: %.0f rows read per row returned",
			q.Index, scanned, scanned/max(perExec, 1))
	case q.Index != "":
		evidence += ", through index " + q.Index
	default:
		scanned := st.rows / st.rf
		evidence += fmt.Sprintf(", each reading the table's %.0f rows: %.0f rows read per row returned", scanned, scanned/max(perExec, 1))
	}
	f.Evidence = evidence
	return f
}
