package gateway

import (
	"fmt"

	"github.com/cqlpg/cqlpg/sharding"
)

// PartitionReplicas returns the shards, by their place in the gateway's
// configuration, holding a partition of a table, its first replica first.
func (s *Server) PartitionReplicas(keyspace, table string, partition ...[]byte) ([]int, error) {
	schema := s.cluster.Schema()
	t := schema.Table(keyspace, table)
	if t == nil {
		return nil, fmt.Errorf("no table %s.%s", keyspace, table)
	}
	placement := s.cluster.Topology().Placement(schema.Keyspace(keyspace).Replication)
	return placement.Replicas(sharding.KeyToken(partition)), nil
}

// DropPaxos makes the gateway drop the Paxos messages of a phase
// ("prepare", "propose", "commit") to the shards drop names, as a network
// partition or a gateway dying halfway would; nil sends them all again.
func (s *Server) DropPaxos(drop func(phase string, shard int) bool) {
	if drop == nil {
		s.env.Hooks.PaxosDrop.Store(nil)
		return
	}
	s.env.Hooks.PaxosDrop.Store(&drop)
}

// OnReadRepaired makes f run after each read repair, before the read
// takes its data again; nil runs nothing.
func (s *Server) OnReadRepaired(f func()) {
	if f == nil {
		s.env.Hooks.ReadRepaired.Store(nil)
		return
	}
	s.env.Hooks.ReadRepaired.Store(&f)
}
