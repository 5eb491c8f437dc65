package gateway

import (
	"context"

	"github.com/cqlpg/cqlpg/sharding"
)

// Ring returns the gateway's token ring.
func (s *Server) Ring() *sharding.Ring { return s.cluster.topology().Ring }

// RepairTokenRange repairs the token range (start, end] of a table, as a
// range scan whose replicas disagreed does, and returns the rows sent.
func (s *Server) RepairTokenRange(ctx context.Context, keyspace, table string, start, end int64) (int64, error) {
	return s.cluster.repairRange(ctx, s.cluster.schema().Table(keyspace, table), start, end)
}

// RepairTokenPartition repairs the partition of a table at a token, as
// blocking read repair does, and returns the rows sent.
func (s *Server) RepairTokenPartition(ctx context.Context, keyspace, table string, token int64) (int64, error) {
	return s.cluster.repairPartition(ctx, s.cluster.schema().Table(keyspace, table), token)
}
