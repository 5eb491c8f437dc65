package gateway

import (
	"context"
	"errors"

	"github.com/cqlpg/cqlpg/pgschema"
)

// Read repair: a read whose replicas disagreed reconciles what it read on
// the replicas it asked, before reading it again (replica_reads.go), with
// the repair engine's statements (repair_sync.go). As Cassandra's blocking
// read repair, it leaves the replicas it did not ask to hints and repair.

// repairPartition reconciles the partition at token on replicas.
func (s *Server) repairPartition(ctx context.Context, t *pgschema.Table, token int64, replicas []int) error {
	if t.IsCounter() {
		return errCounterRepair
	}
	run := newRepairRun(s.cluster.topology(), 0)
	err := run.leaf(ctx, statementsFor(t), token, token, replicas, repairPartitionRows)
	return errors.Join(err, run.err())
}

// repairRange reconciles the token range (start, end] on replicas.
func (s *Server) repairRange(ctx context.Context, t *pgschema.Table, start, end int64, replicas []int) error {
	if t.IsCounter() {
		return errCounterRepair
	}
	run := newRepairRun(s.cluster.topology(), 0)
	st := statementsFor(t)
	for _, piece := range inclusive(start, end) {
		if _, err := run.reconcile(ctx, st, piece[0], piece[1], replicas, false); err != nil {
			return err
		}
	}
	return run.err()
}
