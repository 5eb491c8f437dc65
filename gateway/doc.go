// Package gateway speaks the Cassandra native protocol (v3 and v4) and
// runs each request on the shards.
//
// In: client connections and the shards' connection strings. Out: CQL
// responses, with rows read from and writes applied to the shards.
//
// A request's way: the connection's reader decodes the frame header and
// keeps the body as bytes; a goroutine per request decodes it, finds the
// plan in the cache (planning a statement once per keyspace and text),
// binds values, computes each partition's token from the raw key bytes,
// resolves replicas against one topology snapshot, runs the plan's SQL on
// the shard pools, and encodes rows straight into the response; one
// writer goroutine per connection coalesces responses.
//
// Beside requests, the sweeper (sweeper.go) removes expired data and old
// tombstones from the shards in the background, in bounded batches, and
// the batch log replayer (batchlog.go) finishes LOGGED batches that a
// gateway left half-applied.
//
// Invariants: errorMessage is the only place an error becomes a CQL error
// message; a panic in a request is answered as a server error and never
// ends the process; system tables are answered from the catalog snapshot;
// a batch's writes reach each shard as one transaction; a partition's
// lightweight transactions and SERIAL reads take one lock on its first
// replica, and a conditional write reaches every replica before the lock
// is released (exec_lwt.go).
package gateway
