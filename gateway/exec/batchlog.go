package exec

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// The batch log (the catalog's cqlpg.batchlog table) makes a LOGGED batch
// that spans shards all-or-nothing: the batch is recorded on two of the
// shards it writes to before any write is sent, and the record is deleted
// once every shard applied its part. Any gateway replays records older
// than its batch log timeout. Writes are idempotent (each cell keeps its
// write time and the shards reconcile by Cassandra's rules), so a replay
// that repeats writes already applied changes nothing; counter batches,
// whose writes are not idempotent, are never logged, as in Cassandra.

// logCopies is how many shards hold each record, as Cassandra writes each
// batch log entry to two nodes.
const logCopies = 2

var (
	// stmtLogDurable makes the record's transaction wait for its commit
	// to be durable, whatever the shard's synchronous_commit setting.
	stmtLogDurable = sharding.NewStatement(pgschema.BatchlogDurableSQL, nil)
	stmtLogInsert  = sharding.NewStatement(pgschema.BatchlogInsertSQL,
		[]uint32{pgschema.OIDUUID, pgschema.OIDUUID, pgschema.OIDInt8, pgschema.OIDBytea})
	// stmtLogDelete leaves a record that a replay holds: the replay
	// deletes it, and deleting never waits for the replay to end.
	stmtLogDelete = sharding.NewStatement(pgschema.BatchlogDeleteSQL, []uint32{pgschema.OIDUUID})
)

// logEntry is a batch written to the batch log, and the shards holding it.
type logEntry struct {
	id     [16]byte
	copies []int
}

// logBatch writes a batch's record to the batch log, on up to two of the
// shards it writes to, chosen by the record's id to spread the load. It
// succeeds when at least one copy is durable.
func (v *Env) logBatch(ctx context.Context, topo *sharding.Topology, parts []shardPart, gcGrace int64,
	consistency sharding.Consistency) (*logEntry, error) {
	e := &logEntry{id: cluster.NewUUID(4)}
	rec := &batchRecord{parts: make([]batchPart, len(parts))}
	for i, p := range parts {
		rec.parts[i] = batchPart{shard: topo.Shards[p.shard].Info.HostID, steps: p.steps}
	}
	var grace [8]byte
	binary.BigEndian.PutUint64(grace[:], uint64(gcGrace))
	host := v.HostID()
	args := [][]byte{e.id[:], host[:], grace[:], appendBatchRecord(nil, rec)}
	start := int(e.id[0]) % len(parts)
	ops := make([]*sharding.Op, 0, logCopies)
	for i := range min(logCopies, len(parts)) {
		shard := parts[(start+i)%len(parts)].shard
		op := sharding.NewTx([]sharding.Step{{Stmt: stmtLogDurable}, {Stmt: stmtLogInsert, Args: args, Formats: binaryParams}}, nil)
		topo.Shards[shard].Pool.Submit(op)
		e.copies, ops = append(e.copies, shard), append(ops, op)
	}
	var errs []error
	for i, op := range ops {
		if err := op.Wait(ctx); err != nil {
			errs = append(errs, err)
			v.Log.Warn("cannot write a batch log copy", "batch", pgschema.UUIDText(e.id[:]),
				"shard", topo.Shards[e.copies[i]].Info.Name, "err", err)
		}
	}
	if len(errs) == len(ops) {
		// A copy may be durable all the same, its answer lost: the batch
		// may still apply, as after Cassandra's BATCH_LOG write timeout.
		return nil, &WriteTimeoutError{WriteType: primitive.WriteTypeBatchLog, Consistency: consistency, BlockFor: len(ops),
			err: fmt.Errorf("write batch log: %w", errs[0])}
	}
	v.Metrics.BatchlogWrites.Inc()
	return e, nil
}

// forgetBatch deletes a batch's record once the batch applied in full. It
// does not wait: a record left behind is replayed, which is harmless.
func (v *Env) forgetBatch(topo *sharding.Topology, e *logEntry) {
	for _, shard := range e.copies {
		topo.Shards[shard].Pool.Submit(sharding.NewOp(stmtLogDelete, [][]byte{e.id[:]}, binaryParams, nil))
	}
}

// replayLimit is how many records one replay transaction takes.
const replayLimit = 32

// ReplayBatchlog replays every shard's batch log at once and then every
// interval, until ctx ends.
func (v *Env) ReplayBatchlog(ctx context.Context) {
	tick := time.NewTicker(v.Config.BatchlogInterval)
	defer tick.Stop()
	for {
		topo, control := v.Cluster.Snapshot()
		for i, pool := range control {
			if err := v.replayShard(ctx, pool); err != nil && ctx.Err() == nil {
				v.Log.Warn("cannot replay the batch log", "shard", topo.Shards[i].Info.Name, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// loggedBatch is a record read from the batch log.
type loggedBatch struct {
	id        [16]byte
	gateway   [16]byte
	writtenAt time.Time
	expired   bool
	mutations []byte
}

// replayShard replays the records of one shard's batch log (pool, its
// control pool) older than
// the batch log timeout, a few at a time, each under a row lock that
// keeps other gateways from replaying it at the same time (SKIP LOCKED).
// A replayed record is deleted from every shard, since the batch's other
// copy may be anywhere.
func (v *Env) replayShard(ctx context.Context, pool *pgxpool.Pool) error {
	for {
		var done []string
		n := 0
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			rows, _ := tx.Query(ctx, pgschema.BatchlogReplaySQL,
				v.Config.BatchlogTimeout.Milliseconds(), replayLimit)
			batches, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (loggedBatch, error) {
				var b loggedBatch
				err := row.Scan(&b.id, &b.gateway, &b.writtenAt, &b.expired, &b.mutations)
				return b, err
			})
			if err != nil {
				return err
			}
			n = len(batches)
			for _, b := range batches {
				if v.replay(ctx, &b) {
					done = append(done, pgschema.UUIDText(b.id[:]))
				}
			}
			if len(done) == 0 {
				return nil
			}
			_, err = tx.Exec(ctx, pgschema.BatchlogDoneSQL, done)
			return err
		})
		if err != nil {
			return err
		}
		for _, other := range v.Cluster.Control() {
			if other != pool && len(done) > 0 {
				// A copy that another gateway is replaying is left to it.
				if _, err := other.Exec(ctx, pgschema.BatchlogDoneElsewhereSQL, done); err != nil {
					return err
				}
			}
		}
		// Stop at the first record kept for later, or when none is left.
		if n < replayLimit || len(done) < n {
			return nil
		}
	}
}

// replay applies a logged batch's writes again, and reports whether the
// record is finished with: replayed, or dropped because it cannot be.
// Writes that fail for good (their table was dropped, say) are dropped
// and logged; a shard that cannot be reached keeps the record for the
// next replay.
func (v *Env) replay(ctx context.Context, b *loggedBatch) bool {
	log := v.Log.With("batch", pgschema.UUIDText(b.id[:]), "writer", pgschema.UUIDText(b.gateway[:]), "written_at", b.writtenAt)
	if b.expired {
		log.Error("batch log record is older than its tables' gc_grace_seconds; dropped without replay")
		v.Metrics.BatchlogReplays.WithLabelValues("dropped").Inc()
		return true
	}
	rec, err := decodeBatchRecord(b.mutations)
	if err != nil {
		log.Error("batch log record cannot be read; dropped", "err", err)
		v.Metrics.BatchlogReplays.WithLabelValues("dropped").Inc()
		return true
	}
	topo := v.Cluster.Topology()
	var parts []shardPart
	for _, p := range rec.parts {
		shard := shardOf(topo, p.shard)
		if shard < 0 {
			log.Error("batch log record writes to a shard that left the cluster; its writes there are dropped",
				"host_id", pgschema.UUIDText(p.shard[:]))
			continue
		}
		parts = append(parts, shardPart{shard: shard, steps: p.steps})
	}
	ctx, cancel := context.WithTimeout(ctx, v.Config.RequestTimeout)
	defer cancel()
	errs := applyParts(ctx, topo, parts, nil)
	dropped := false
	for i, err := range errs {
		switch {
		case err == nil:
		case permanent(err):
			log.Error("batch log writes cannot be replayed on a shard; dropped",
				"shard", topo.Shards[parts[i].shard].Info.Name, "err", err)
			dropped = true
		default:
			log.Warn("batch log replay failed; will retry", "shard", topo.Shards[parts[i].shard].Info.Name, "err", err)
			return false
		}
	}
	if dropped {
		v.Metrics.BatchlogReplays.WithLabelValues("dropped").Inc()
		return true
	}
	log.Info("replayed a logged batch", "shards", len(parts), "age", time.Since(b.writtenAt).Round(time.Millisecond))
	v.Metrics.BatchlogReplays.WithLabelValues("applied").Inc()
	return true
}

// shardOf returns the index of the shard with a host id, or -1.
func shardOf(topo *sharding.Topology, hostID [16]byte) int {
	for i, sh := range topo.Shards {
		if sh.Info.HostID == hostID {
			return i
		}
	}
	return -1
}
