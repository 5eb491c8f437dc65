package repair

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// SweepConfig sets how the sweeper removes expired data and old
// tombstones from the shards. Reads hide expired data at once; the sweeper
// only reclaims the space, in batches small enough never to hold up
// writers (pgschema.SweepSQL says what a batch does).
type SweepConfig struct {
	// Interval is the time between background passes; zero disables
	// them (Sweeper.Pass still runs one on demand).
	Interval time.Duration
	// BatchRows is the most rows one statement changes, and BatchBlocks
	// the most heap blocks it reads.
	BatchRows   int
	BatchBlocks int
	// PassBatches is the most statements a pass runs on each shard. A
	// pass that runs out stops, and the next one resumes where it
	// stopped.
	PassBatches int
}

func (c *SweepConfig) setDefaults() {
	if c.BatchRows <= 0 {
		c.BatchRows = 500
	}
	if c.BatchBlocks <= 0 {
		c.BatchBlocks = 256
	}
	if c.PassBatches <= 0 {
		c.PassBatches = 500
	}
}

// SweepStats reports one pass on one shard.
type SweepStats struct {
	Shard string
	// Parts counts the Postgres tables visited (main, static and
	// deletions tables), Batches the statements run.
	Parts   int
	Batches int
	// RowsPurged counts rows deleted, CellsExpired expired cells made
	// tombstones, MarkersExpired expired row markers dropped.
	RowsPurged     int64
	CellsExpired   int64
	MarkersExpired int64
	// BallotsPurged counts the partitions' Paxos states dropped past
	// their expiry.
	BallotsPurged int64
	// Skipped counts parts left for a later pass: dropped or changed by a
	// schema change during the pass, or locked by one.
	Skipped int
	// Finished reports that every part was swept to its end.
	Finished bool
	Duration time.Duration
	// Err is the error that stopped the pass on the shard, if any.
	Err error
}

// Sweeper runs passes over every shard, in the background every interval
// and on demand, one pass at a time.
type Sweeper struct {
	cluster *cluster.Cluster
	cfg     SweepConfig
	log     *slog.Logger
	// onPass hears of each shard's pass, for the gateway's metrics.
	onPass func(SweepStats)
	mu     sync.Mutex // held during a pass; guards shards and stopped
	shards []*shardSweep
	// stopped is set once the gateway shuts down: passes then do nothing.
	stopped bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// shardSweep is a shard's sweeping state, kept from pass to pass.
type shardSweep struct {
	name string
	url  string
	pool *pgxpool.Pool // one connection, opened at the first pass
	// cursors hold the next heap block of parts swept partway, and
	// resume the part the last pass stopped at.
	cursors map[partKey]int64
	resume  partKey
}

// partKey identifies a Postgres table holding a CQL table's data; a table
// dropped and created again has a new id.
type partKey struct {
	id   [16]byte
	part pgschema.SweepPart
}

// sweepPart is a part to sweep, with its statement built from one schema
// snapshot.
type sweepPart struct {
	key     partKey
	table   *pgschema.Table
	sql     string
	version [16]byte
}

// errSchemaChanged stops a shard's pass when its schema version is not
// the one the statements were built from.
var errSchemaChanged = errors.New("the shard's schema differs from the gateway's")

// NewSweeper makes the sweeper of the shards of c and starts its
// background passes if cfg sets an interval; onPass, when set, hears of
// each shard's pass.
func NewSweeper(c *cluster.Cluster, cfg SweepConfig, log *slog.Logger, onPass func(SweepStats)) *Sweeper {
	cfg.setDefaults()
	w := &Sweeper{cluster: c, cfg: cfg, log: log, onPass: onPass}
	for _, sh := range c.Topology().Shards {
		w.shards = append(w.shards, &shardSweep{name: sh.Info.Name, url: sh.URL, cursors: map[partKey]int64{}})
	}
	if cfg.Interval > 0 {
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel, w.done = cancel, make(chan struct{})
		go w.run(ctx)
	}
	return w
}

func (w *Sweeper) run(ctx context.Context) {
	defer close(w.done)
	tick := time.NewTicker(w.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			w.Pass(ctx)
		}
	}
}

// Stop ends the background passes, waiting for one in progress, and
// closes the sweeper's connections.
func (w *Sweeper) Stop() {
	if w.cancel != nil {
		w.cancel()
		<-w.done
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	for _, sh := range w.shards {
		if sh.pool != nil {
			sh.pool.Close()
			sh.pool = nil
		}
	}
}

// Pass sweeps every shard in parallel, each within its budget.
func (w *Sweeper) Pass(ctx context.Context) []SweepStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	stats := make([]SweepStats, len(w.shards))
	if w.stopped {
		for i, sh := range w.shards {
			stats[i] = SweepStats{Shard: sh.name, Err: errors.New("the gateway is shut down")}
		}
		return stats
	}
	now := time.Now()
	parts := partsOf(w.cluster.Schema())
	var wg sync.WaitGroup
	for i, sh := range w.shards {
		wg.Go(func() {
			stats[i] = w.sweepShard(ctx, sh, parts, now)
			w.report(stats[i])
		})
	}
	wg.Wait()
	return stats
}

// partsOf lists the parts of every user table, ordered by keyspace, table
// and part, with their statements.
func partsOf(schema *pgschema.Schema) []sweepPart {
	var parts []sweepPart
	for _, k := range schema.Keyspaces() {
		if k.Virtual || pgschema.IsSystemKeyspace(k.Name) {
			continue
		}
		for _, name := range k.TableNames() {
			t := k.Tables[name]
			if t.Virtual {
				continue
			}
			for _, p := range []pgschema.SweepPart{pgschema.SweepRows, pgschema.SweepStatic, pgschema.SweepDeletions} {
				if sql := t.SweepSQL(p); sql != "" {
					parts = append(parts, sweepPart{key: partKey{t.ID, p}, table: t, sql: sql, version: schema.Version})
				}
			}
		}
	}
	return parts
}

// sweepShard runs one pass on a shard: the parts in order, from the one
// the last pass stopped at, until the budget runs out.
func (w *Sweeper) sweepShard(ctx context.Context, sh *shardSweep, parts []sweepPart, now time.Time) (st SweepStats) {
	start := time.Now()
	st.Shard = sh.name
	defer func() { st.Duration = time.Since(start) }()
	if sh.pool == nil {
		pc, err := sharding.ParsePoolConfig(sh.url, w.log)
		if err != nil {
			st.Err = err
			return st
		}
		pc.MaxConns = 1
		// A batch waits for no row lock (it skips locked rows), and only
		// briefly for a table lock held by a schema change.
		for k, v := range map[string]string{"application_name": "cqlpg sweeper", "lock_timeout": "2s",
			"statement_timeout": "60s"} {
			pc.ConnConfig.RuntimeParams[k] = v
		}
		if sh.pool, err = pgxpool.NewWithConfig(ctx, pc); err != nil {
			st.Err = err
			return st
		}
	}
	if err := w.purgeBallots(ctx, sh, now, &st); err != nil && ctx.Err() == nil {
		st.Err = fmt.Errorf("purge LWT ballots: %w", err)
		return st
	}
	first := slices.IndexFunc(parts, func(p sweepPart) bool { return p.key == sh.resume })
	budget := w.cfg.PassBatches
	st.Finished = true
	for i := range parts {
		p := parts[(max(first, 0)+i)%len(parts)]
		if budget == 0 {
			sh.resume, st.Finished = p.key, false
			return st
		}
		st.Parts++
		done, err := w.sweepPart(ctx, sh, p, now, &budget, &st)
		switch {
		case err == nil:
		case ctx.Err() != nil:
			// The gateway is shutting down or the caller gave up.
			sh.resume, st.Finished = p.key, false
			return st
		case skippable(err):
			st.Skipped++
			w.log.Debug("sweep skipped a table", "shard", sh.name, "table", p.table.QualifiedName(),
				"part", p.key.part.String(), "err", err)
			continue
		case errors.Is(err, errSchemaChanged):
			// Another gateway changed the schema, or a change applied
			// on some shards only: nothing is swept until this gateway
			// reads the schema again.
			st.Skipped++
			w.log.Debug("sweep stopped", "shard", sh.name, "err", err)
			sh.resume, st.Finished = p.key, false
			return st
		default:
			st.Err = fmt.Errorf("sweep %s (%s): %w", p.table.QualifiedName(), p.key.part, err)
			sh.resume, st.Finished = p.key, false
			return st
		}
		if !done {
			sh.resume, st.Finished = p.key, false
			return st
		}
	}
	sh.resume = partKey{}
	return st
}

// BallotLifetime is how long a partition's Paxos state (cqlpg.paxos)
// outlives its last ballot at least: the state expires max(BallotLifetime,
// the table's gc_grace_seconds) after it, judged by the ballot's time, as
// Cassandra's Paxos state does. Without the purge the state would hold a
// row for every partition ever written conditionally or read at SERIAL.
const BallotLifetime = 3 * time.Hour

// purgeBallots drops the Paxos state past its expiry, in at most
// PassBatches batches of their own (besides the pass's budget, which the
// tables' batches use); the next pass goes on.
func (w *Sweeper) purgeBallots(ctx context.Context, sh *shardSweep, now time.Time, st *SweepStats) error {
	horizon := now.UnixMicro()
	for range w.cfg.PassBatches {
		tag, err := sh.pool.Exec(ctx, `DELETE FROM cqlpg.paxos WHERE (table_id, digest) IN
			(SELECT table_id, digest FROM cqlpg.paxos WHERE expires < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, horizon, w.cfg.BatchRows)
		if err != nil {
			return err
		}
		st.BallotsPurged += tag.RowsAffected()
		if tag.RowsAffected() < int64(w.cfg.BatchRows) {
			return nil
		}
	}
	return nil
}

// maxBlockEnd bounds block numbers, which are unsigned 32-bit.
const maxBlockEnd = 1<<32 - 1

// sweepPart runs batches over a part, from its cursor, until it reaches
// the part's end (reporting true) or the budget runs out. A range of
// blocks is swept again until a batch finds fewer rows to change than it
// may change.
func (w *Sweeper) sweepPart(ctx context.Context, sh *shardSweep, p sweepPart, now time.Time, budget *int, st *SweepStats) (bool, error) {
	nowSeconds := now.Unix()
	cutoff := (nowSeconds - int64(p.table.Params().GCGraceSeconds)) * 1_000_000
	lo := sh.cursors[p.key]
	for *budget > 0 {
		hi := min(lo+int64(w.cfg.BatchBlocks), maxBlockEnd)
		var locked, purged, cells, markers, blocks int64
		var current bool
		err := sh.pool.QueryRow(ctx, p.sql, int32(nowSeconds), cutoff, lo, hi, int64(w.cfg.BatchRows), p.version).
			Scan(&locked, &purged, &cells, &markers, &blocks, &current)
		*budget--
		st.Batches++
		if err != nil {
			return false, err
		}
		if !current {
			return false, errSchemaChanged
		}
		st.RowsPurged += purged
		st.CellsExpired += cells
		st.MarkersExpired += markers
		if locked < int64(w.cfg.BatchRows) {
			lo = hi
		}
		if lo >= blocks || lo >= maxBlockEnd {
			delete(sh.cursors, p.key)
			return true, nil
		}
		sh.cursors[p.key] = lo
	}
	return false, nil
}

// skippable reports errors that leave a part for a later pass: the table
// or a column dropped, or a lock not granted in time.
func skippable(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "42P01", "42703", "3F000", "55P03", "40P01", "57014":
		// undefined_table, undefined_column, invalid_schema_name,
		// lock_not_available, deadlock_detected, query_canceled
		return true
	}
	return false
}

// report tells onPass of a shard's pass and logs it: at Info when it
// changed or skipped something, at Warn when it failed.
func (w *Sweeper) report(st SweepStats) {
	if w.onPass != nil {
		w.onPass(st)
	}
	attrs := []any{"shard", st.Shard, "parts", st.Parts, "batches", st.Batches, "rows_purged", st.RowsPurged,
		"cells_expired", st.CellsExpired, "markers_expired", st.MarkersExpired, "ballots_purged", st.BallotsPurged, "skipped", st.Skipped,
		"finished", st.Finished, "duration", st.Duration}
	switch {
	case st.Err != nil:
		w.log.Warn("sweep pass failed", append(attrs, "err", st.Err)...)
	case st.RowsPurged+st.CellsExpired+st.MarkersExpired+st.BallotsPurged > 0 || st.Skipped > 0:
		w.log.Info("sweep pass", attrs...)
	default:
		w.log.Debug("sweep pass", attrs...)
	}
}

// String describes a shard's pass, as tests print it.
func (st SweepStats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d parts, %d batches, %d rows purged, %d cells and %d markers expired, %d ballots purged, %d skipped, finished %v",
		st.Shard, st.Parts, st.Batches, st.RowsPurged, st.CellsExpired, st.MarkersExpired, st.BallotsPurged, st.Skipped, st.Finished)
	if st.Err != nil {
		fmt.Fprintf(&b, ": %v", st.Err)
	}
	return b.String()
}
