package gateway

import (
	"context"

	"github.com/cqlpg/cqlpg/gateway/repair"
	"github.com/cqlpg/cqlpg/sharding"
)

// Ring returns the gateway's token ring.
func (s *Server) Ring() *sharding.Ring { return s.cluster.Topology().Ring }

// RepairTokenRange repairs the token range (start, end] of a table, as a
// range scan whose replicas disagreed does, and returns the rows sent.
func (s *Server) RepairTokenRange(ctx context.Context, keyspace, table string, start, end int64) (int64, error) {
	return repair.Range(ctx, s.cluster, s.cluster.Schema().Table(keyspace, table), start, end)
}

// RepairTokenPartition repairs the partition of a table at a token, as
// blocking read repair does, and returns the rows sent.
func (s *Server) RepairTokenPartition(ctx context.Context, keyspace, table string, token int64) (int64, error) {
	return repair.Token(ctx, s.cluster, s.cluster.Schema().Table(keyspace, table), token)
}
