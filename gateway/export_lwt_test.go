package gateway

import (
	"fmt"

	"github.com/cqlpg/cqlpg/gateway/exec"
	"github.com/cqlpg/cqlpg/sharding"
)

// PartitionReplicas returns the shards, by their place in the gateway's
// configuration, holding a partition of a table, its first replica first,
// and the key of the partition's lightweight transaction lock there.
func (s *Server) PartitionReplicas(keyspace, table string, partition ...[]byte) ([]int, int64, error) {
	schema := s.cluster.Schema()
	t := schema.Table(keyspace, table)
	if t == nil {
		return nil, 0, fmt.Errorf("no table %s.%s", keyspace, table)
	}
	placement := s.cluster.Topology().Placement(schema.Keyspace(keyspace).Replication)
	return placement.Replicas(sharding.KeyToken(partition)), exec.LockKey(t, partition), nil
}
