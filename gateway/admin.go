package gateway

import (
	"context"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/repair"
)

// OpenCluster opens the shards of cfg for a tool, such as repair or the
// bulk loader; Listen, HTTP and the background settings are ignored.
func OpenCluster(ctx context.Context, cfg Config) (*cluster.Cluster, error) {
	cfg.setDefaults()
	return cluster.Open(ctx, cfg.clusterConfig(), cfg.Log, func(string, bool) {})
}

// Repair runs anti-entropy repair on the gateway's shards (repair.Run),
// following it in the gateway's metrics.
func (s *Server) Repair(ctx context.Context, opts repair.Options) (repair.Result, error) {
	opts.Status = &s.metrics.repair
	return repair.Run(ctx, s.cluster, opts)
}

// RepairPartition repairs one partition of a table, given its partition
// key's components, across its replicas (repair.Partition).
func (s *Server) RepairPartition(ctx context.Context, keyspace, table string, key ...[]byte) (repair.Result, error) {
	return repair.Partition(ctx, s.cluster, keyspace, table, key)
}

// Sweep runs one sweeper pass on every shard, after any pass in progress,
// and reports it shard by shard.
func (s *Server) Sweep(ctx context.Context) []repair.SweepStats { return s.sweeper.Pass(ctx) }

// DefaultSweepInterval is the time between sweeper passes that cqlpg
// serve uses.
const DefaultSweepInterval = time.Minute
