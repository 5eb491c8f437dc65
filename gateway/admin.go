package gateway

import (
	"context"

	"github.com/cqlpg/cqlpg/sharding"
)

// Cluster is a gateway's shards opened for an operator's tool (cqlpg
// repair, cqlpg ring), without a CQL listener or background work: the
// catalogs migrated, the shards joined to the ring and the schema loaded,
// exactly as a gateway starting on them would.
type Cluster struct {
	c *cluster
}

// OpenCluster opens the shards of cfg; Listen, HTTP and the background
// settings are ignored.
func OpenCluster(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg.setDefaults()
	c, err := openCluster(ctx, cfg, cfg.Log, func(string, bool) {})
	if err != nil {
		return nil, err
	}
	return &Cluster{c: c}, nil
}

// Close closes the connections to the shards.
func (c *Cluster) Close() { c.c.close() }

// Ring returns the token ring of the shards, indexed in the order the
// configuration gave them.
func (c *Cluster) Ring() *sharding.Ring { return c.c.topology().Ring }

// Repair is Server.Repair for a tool.
func (c *Cluster) Repair(ctx context.Context, opts RepairOptions) (RepairResult, error) {
	return c.c.repair(ctx, opts)
}

// RepairPartition is Server.RepairPartition for a tool.
func (c *Cluster) RepairPartition(ctx context.Context, keyspace, table string, key ...[]byte) (RepairResult, error) {
	return c.c.repairKey(ctx, keyspace, table, key)
}
