// Package repair brings the replicas of a table to the reconciled union
// of their data: anti-entropy repair over token ranges (Run), of one
// partition (Partition, Token), and the read repair a read whose replicas
// disagreed asks for (PartitionOn, RangeOn). It reads and writes through
// the shard pools with the gateway's own write semantics, so it runs
// while clients write. The Sweeper reclaims the space of expired cells
// and old tombstones in the background, in bounded batches.
//
// It imports cluster, pgschema and sharding, never the gateway; the
// gateway and the repair command import it. Status follows the last
// repair for the gateway's metrics. Counter tables are refused
// (ErrCounter): a replica holds only a counter's total.
package repair
