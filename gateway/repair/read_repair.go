package repair

import (
	"context"
	"errors"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Read repair: a read whose replicas disagreed reconciles what it read on
// the replicas it asked, before reading it again (the gateway's replica
// reads), with the repair engine's statements (sync.go). As Cassandra's blocking
// read repair, it leaves the replicas it did not ask to hints and repair.

// PartitionOn reconciles the partition at token on replicas.
func PartitionOn(ctx context.Context, topo *sharding.Topology, t *pgschema.Table, token int64, replicas []int) error {
	if t.IsCounter() {
		return ErrCounter
	}
	run := newRepairRun(topo, 0)
	err := run.leaf(ctx, statementsFor(t), token, token, replicas, repairPartitionRows)
	return errors.Join(err, run.err())
}

// RangeOn reconciles the token range (start, end] on replicas, and
// returns the rows it sent to a replica that lacked them or held them
// otherwise, once per replica.
func RangeOn(ctx context.Context, topo *sharding.Topology, t *pgschema.Table, start, end int64, replicas []int) (int64, error) {
	if t.IsCounter() {
		return 0, ErrCounter
	}
	run := newRepairRun(topo, 0)
	st := statementsFor(t)
	for _, piece := range (sharding.Range{Start: sharding.Token(start), End: sharding.Token(end)}).Inclusive() {
		if _, err := run.reconcile(ctx, st, piece[0], piece[1], replicas, false); err != nil {
			return run.moved.Load(), err
		}
	}
	return run.moved.Load(), run.err()
}
