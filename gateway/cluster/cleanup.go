package cluster

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// Cleanup has every member delete, from each table of keyspace (every
// keyspace if empty; only table if set), the partitions of the ranges it
// does not replicate on the ring served: copies a movement left behind,
// as Cassandra leaves them to nodetool cleanup. It refuses while a
// topology operation is in progress, when those copies may be needed, and
// while a member is down. progress hears of each table done on a member,
// with the rows it deleted. It returns the rows deleted.
func (c *Cluster) Cleanup(ctx context.Context, keyspace, table string, progress func(shard, table string, rows int64)) (int64, error) {
	members, _, err := c.currentMembers(ctx)
	if err != nil {
		return 0, err
	}
	if op := Operation(members); op != "" {
		return 0, fmt.Errorf("Node is involved in cluster membership changes. Not safe to run cleanup. (in progress: %s)", op)
	}
	if err := c.replicationChanging(); err != nil {
		return 0, err
	}
	if err := c.needUp(ctx, -1, "a cleanup"); err != nil {
		return 0, err
	}
	var tables []*pgschema.Table
	for _, ks := range c.Schema().Keyspaces() {
		if ks.Virtual || pgschema.IsSystemKeyspace(ks.Name) || (keyspace != "" && ks.Name != keyspace) {
			continue
		}
		for _, t := range ks.SortedTables() {
			if table == "" || t.Name == table {
				tables = append(tables, t)
			}
		}
	}
	if len(tables) == 0 {
		return 0, fmt.Errorf("no table matches %q", keyspace+"."+table)
	}
	topo := c.Topology()
	control := c.Control()
	var total int64
	for _, t := range tables {
		placement := topo.Placement(c.Schema().Keyspace(t.Keyspace).Replication)
		for shard, pool := range control {
			foreign := foreignRanges(topo.Ring, placement, shard)
			var rows int64
			for _, rel := range t.Relations() {
				for _, r := range foreign {
					tag, err := pool.Exec(ctx, "DELETE FROM "+rel+" WHERE "+pgschema.Quote(pgschema.TokenColumn)+
						" BETWEEN $1 AND $2", r[0], r[1])
					if err != nil {
						return total, fmt.Errorf("%s on %s: %w", t.Keyspace+"."+t.Name, topo.Shards[shard].Info.Name, err)
					}
					if rel == t.Ident() {
						rows += tag.RowsAffected()
					}
				}
			}
			total += rows
			if progress != nil {
				progress(topo.Shards[shard].Info.Name, t.Keyspace+"."+t.Name, rows)
			}
		}
	}
	return total, nil
}

// foreignRanges returns the token ranges shard does not replicate under
// placement, as inclusive [lo, hi] bounds, merged where they touch.
func foreignRanges(ring *sharding.Ring, placement *sharding.Placement, shard int) [][2]int64 {
	var out [][2]int64
	add := func(lo, hi int64) {
		if n := len(out); n > 0 && out[n-1][1] != math.MaxInt64 && out[n-1][1]+1 == lo {
			out[n-1][1] = hi
			return
		}
		out = append(out, [2]int64{lo, hi})
	}
	for i := range ring.Len() {
		if slices.Contains(placement.RangeReplicas(i), shard) {
			continue
		}
		for _, r := range ring.Range(i).Inclusive() {
			add(r[0], r[1])
		}
	}
	return out
}
