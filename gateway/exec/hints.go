package exec

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Hints (the catalog's cqlpg.hints table) keep the writes a replica
// missed. replicas.go writes one, on a shard that is up, for each replica
// that was down, failed, or had not answered when the client was answered;
// every gateway replays the hints of replicas that are up, oldest first,
// and deletes them. A hint is the write's SQL and parameters in the batch
// log's record format, so replaying needs neither the parser nor the
// schema, and repeats the write exactly. Hints older than their table's
// gc_grace_seconds are dropped instead: the tombstones they would meet may
// be purged, and only a repair can then bring the replica up to date.

var (
	stmtHintInsert = sharding.NewStatement(pgschema.HintInsertSQL, []uint32{pgschema.OIDUUID, pgschema.OIDInt8, pgschema.OIDBytea})
)

// hintStep returns the statement that stores a hint of steps for the
// shard with host id target.
func hintStep(target [16]byte, steps []sharding.Step, gcGrace int64) sharding.Step {
	rec := batchRecord{parts: []batchPart{{shard: target, steps: steps}}}
	grace := binary.BigEndian.AppendUint64(nil, uint64(gcGrace))
	return sharding.Step{Stmt: stmtHintInsert, Args: [][]byte{target[:], grace, appendBatchRecord(nil, &rec)},
		Formats: binaryParams}
}

// hintHolder picks the shard that keeps a hint for target: the first of
// preferred (the partition's other replicas) that is up, else any shard
// that is up; -1 when none is.
func hintHolder(topo *sharding.Topology, target int, preferred []int) int {
	for _, r := range preferred {
		if r != target && topo.Shards[r].Pool.Alive() {
			return r
		}
	}
	for r, sh := range topo.Shards {
		if r != target && sh.Pool.Alive() {
			return r
		}
	}
	return -1
}

// hintReplayInterval is how often the shards are checked for hints of
// replicas that are up; a shard coming back up triggers a check at once.
const hintReplayInterval = time.Second

// hintReplayLimit is how many hints one replay transaction takes.
const hintReplayLimit = 256

// ReplayHints replays hints until ctx ends.
func (v *Env) ReplayHints(ctx context.Context) {
	tick := time.NewTicker(hintReplayInterval)
	defer tick.Stop()
	pending := hintCounts{}
	for {
		v.replayAllHints(ctx, pending)
		v.publishPending(pending)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-v.ShardUp:
		}
	}
}

// hintCounts are the hints each shard holds (by its host id), by target
// host id, as last counted.
type hintCounts map[[16]byte]map[[16]byte]int64

// publishPending sets the gauge of hints pending for each shard: the sum
// of what every holder was last found to hold for it. A holder that is
// down keeps the count it had.
func (v *Env) publishPending(pending hintCounts) {
	for _, sh := range v.Cluster.Topology().Shards {
		var n int64
		for _, held := range pending {
			n += held[sh.Info.HostID]
		}
		v.Metrics.hintsPending.WithLabelValues(sh.Info.Name).Set(float64(n))
	}
}

// replayAllHints replays every hint held by a shard that is up for a
// replica that is up, counting in pending the hints each holder keeps.
func (v *Env) replayAllHints(ctx context.Context, pending hintCounts) {
	topo, control := v.Cluster.Snapshot()
	for holder, sh := range topo.Shards {
		if !sh.Pool.Alive() || ctx.Err() != nil {
			continue
		}
		hctx, cancel := context.WithTimeout(ctx, v.Config.RequestTimeout)
		type held struct {
			target [16]byte
			n      int64
		}
		var targets []held
		rows, err := control[holder].Query(hctx, pgschema.HintsPendingSQL)
		if err == nil {
			targets, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (held, error) {
				var h held
				err := row.Scan(&h.target, &h.n)
				return h, err
			})
		}
		if err == nil {
			pending[sh.Info.HostID] = map[[16]byte]int64{}
		}
		for _, h := range targets {
			pending[sh.Info.HostID][h.target] = h.n
			t := shardOf(topo, h.target)
			if t < 0 || !topo.Shards[t].Pool.Alive() {
				continue
			}
			for err == nil {
				var n, done int
				n, done, err = v.replayHintBatch(hctx, topo, control[holder], t)
				pending[sh.Info.HostID][h.target] -= int64(done)
				if n < hintReplayLimit {
					break
				}
			}
		}
		cancel()
		if err != nil && ctx.Err() == nil {
			v.Log.Warn("cannot replay hints", "shard", sh.Info.Name, "err", err)
		}
	}
}

// storedHint is a hint read for replay.
type storedHint struct {
	id       int64
	expired  bool
	mutation []byte
}

// replayHintBatch replays up to hintReplayLimit hints for target held by
// holder, each under a row lock that keeps other gateways from replaying
// it at the same time, and deletes those applied or dropped. It returns
// how many it read, and deleted.
func (v *Env) replayHintBatch(ctx context.Context, topo *sharding.Topology, holder *pgxpool.Pool, target int) (int, int, error) {
	n, deleted := 0, 0
	err := pgx.BeginFunc(ctx, holder, func(tx pgx.Tx) error {
		rows, _ := tx.Query(ctx, pgschema.HintReplaySQL, topo.Shards[target].Info.HostID, hintReplayLimit)
		hints, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storedHint, error) {
			var h storedHint
			err := row.Scan(&h.id, &h.expired, &h.mutation)
			return h, err
		})
		if err != nil {
			return err
		}
		n = len(hints)
		var parts []shardPart
		var ids, done []int64
		for _, h := range hints {
			rec, err := decodeBatchRecord(h.mutation)
			if h.expired || err != nil || len(rec.parts) != 1 {
				v.Log.Error("hint dropped: older than gc_grace_seconds or unreadable; repair the replica",
					"shard", topo.Shards[target].Info.Name, "err", err)
				v.Metrics.hintsReplayed.WithLabelValues("dropped").Inc()
				done = append(done, h.id)
				continue
			}
			parts = append(parts, shardPart{shard: target, steps: rec.parts[0].steps})
			ids = append(ids, h.id)
		}
		for i, err := range replayParts(ctx, topo, parts) {
			switch {
			case err == nil:
				v.Metrics.hintsReplayed.WithLabelValues("applied").Inc()
			case permanent(err):
				v.Log.Error("hint cannot be replayed; dropped", "shard", topo.Shards[target].Info.Name, "err", err)
				v.Metrics.hintsReplayed.WithLabelValues("dropped").Inc()
			default:
				continue
			}
			done = append(done, ids[i])
		}
		if len(done) == 0 {
			return nil
		}
		tag, err := tx.Exec(ctx, pgschema.HintDoneSQL, topo.Shards[target].Info.HostID, done)
		deleted = int(tag.RowsAffected())
		return err
	})
	if err != nil {
		deleted = 0 // rolled back
	}
	return n, deleted, err
}

// replayParts applies parts, each in its own transaction, all at once,
// and returns each one's error.
func replayParts(ctx context.Context, topo *sharding.Topology, parts []shardPart) []error {
	errs := make([]error, len(parts))
	ops := make([]*sharding.Op, len(parts))
	for i, p := range parts {
		ops[i] = sharding.NewTx(p.steps, nil)
		topo.Shards[p.shard].Pool.Submit(ops[i])
	}
	for i, op := range ops {
		errs[i] = op.Wait(ctx)
	}
	return errs
}
