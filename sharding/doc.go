// Package sharding decides where cqlpg stores a row: which PostgreSQL
// shards hold the replicas of a partition, using the same Murmur3 token ring
// as Cassandra so that token-aware drivers, token() in CQL and
// system.peers/system.local all agree with the gateway.
//
// # Inputs
//
//   - Partition-key bytes: the serialized values of the partition-key
//     columns in key order. A single-column key is the value's bytes; a
//     composite key is built by AppendKey. TokenOf and KeyToken hash them.
//   - Shard descriptions (ShardInfo): one per PostgreSQL server, with its
//     datacenter, rack and the tokens (vnodes) it owns. NewRing builds a Ring
//     from them.
//   - Keyspace replication settings, as the map<text, text> that CREATE
//     KEYSPACE takes. ParseReplication validates them with Cassandra's error
//     texts.
//
// # Outputs
//
//   - Tokens: a Token per partition key, identical to Cassandra's
//     Murmur3Partitioner, quirks included.
//   - Replica sets: Ring.Placement precomputes, for one replication setting,
//     the ordered list of shard indexes that hold each token range, so that
//     Placement.Replicas answers per-request look-ups without allocating.
//   - Shard pools (Pool): ops run on a shard's connections, each
//     connection sending every op queued while it was busy as one
//     pipeline; ops with an Order share one transaction per pipeline, its
//     reads first, so that none passes on a write its transaction may
//     still lose, and its writes acknowledged once it commits. A
//     statement is prepared once per connection under a name digesting
//     its text and parameter types; one Postgres refuses as prepared
//     before a schema change reshaped its result runs again on a fresh
//     connection. A transaction that lasts several round trips (Tx, which
//     a lightweight transaction holds its lock in) runs on connections of
//     the pool's own beside the workers', so that it never starves ops.
//   - Token choices for a joining shard (AllocateTokens) and the share of the
//     ring each shard owns (Ring.Ownership), for the operator tooling.
//
// # Invariants
//
// Token ranges are half-open on the left, (start, end], and the ring wraps
// around: the range ending at the smallest token starts at the largest one
// and covers every token above it as well as every token up to the smallest.
// A key belongs to the range whose end is the first ring token at or above
// the key's token.
//
// A Ring, and a Placement computed from it, never change after they are
// built: a topology change builds a new Ring. Both are therefore safe for
// concurrent use by any number of goroutines without locking. Slices they
// return are either copies or documented as read-only.
package sharding
