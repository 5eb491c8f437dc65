// Package gateway speaks the Cassandra native protocol (v3 to v5, with
// LZ4 or Snappy compression as STARTUP negotiates) and runs each request
// on the shards.
//
// In: client connections and the shards' connection strings. Out: CQL
// responses, with rows read from and writes applied to the shards.
//
// Packages below it: cqlwire (the wire format: frames, segments,
// compression, request decoding, result encoding), cluster (the shards,
// the ring and schema snapshots, schema changes on every shard), repair
// (anti-entropy and read repair, the sweeper), auth (logins and the
// permission check of every statement) and webui (the web view, reading
// the gateway through webui.Backend). The gateway imports them, and
// translate, pgschema and sharding; they never import the gateway
// (TestLayering).
//
// A request's way: the connection's reader decodes the frame header (on
// v5, once the segment that carries the frame has passed its CRCs) and
// keeps the body as bytes; a goroutine per request decompresses and
// decodes it, finds the plan in the cache (planning a statement once per
// keyspace and text),
// binds values, computes each partition's token from the raw key bytes,
// resolves replicas against one topology snapshot, runs the plan's SQL on
// the shard pools, and encodes rows straight into the response; one
// writer goroutine per connection coalesces responses (on v5, into shared
// segments). The EXECUTEs of point reads from one replica and of plain
// one-row writes skip the request goroutine: the reader binds them and
// submits their ops, and the shard pool's goroutine that finishes the op
// the answer waits for encodes it (async.go). Both ways build a write the
// same way (prepareWrite); only the completion differs.
//
// Writes and reads meet their consistency levels as replicas.go and
// replica_reads.go describe: Unavailable before anything is sent when too
// few replicas are up, hints for replicas that miss a write, blocking read
// repair when the replicas asked disagree.
//
// Beside requests, the sweeper (repair.Sweeper) removes expired data and old
// tombstones from the shards in the background, in bounded batches; the
// batch log replayer (batchlog.go) finishes LOGGED batches that a gateway
// left half-applied; the hint replayer (hints.go) delivers hints to
// replicas that are back; the registry (cluster.Registry) keeps the list of
// live gateways for system.peers; and its schema follower
// reloads the schema when another gateway changes it. The HTTP port
// serves health, metrics and the read-only web view (gateway/webui),
// whose key page reads each replica alone through the same plans
// (execution.pinned).
//
// Schema changes: a prepared id digests the statement's text and the
// shape PREPARE told the client (cache.go), so a reshaped statement
// answers UNPREPARED; SQL a shard refuses as stale after a change is
// planned again, or answered UNPREPARED, unless it cannot land twice the
// same way (schemaChanged). A schema change takes its locks briefly,
// retrying, so that it applies on every shard (cluster.Cluster.ApplySchema).
//
// Invariants: errorMessage is the only place an error becomes a CQL error
// message; a panic in a request is answered as a server error and never
// ends the process; system tables are answered from the catalog snapshot;
// a batch's writes reach each shard as one transaction; a partition's
// lightweight transactions and SERIAL reads take one lock on its first
// replica, and a conditional write reaches every replica before the lock
// is released (exec_lwt.go).
package gateway
