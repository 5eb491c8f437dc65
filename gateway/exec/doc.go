// Package exec is the executor: it runs the statements of QUERY, PREPARE,
// EXECUTE and BATCH messages on the shards and appends their RESULT
// bodies. Binding values, keying partitions, placing them on replicas,
// reads and writes at their consistency levels, read repair, hints,
// batches and the batch log, lightweight transactions, paging, system and
// virtual tables, role statements and the prepared statement cache live
// here, with the background replayers of hints and of the batch log.
//
// It knows the gateway through two narrow values: Env, the gateway as
// executions see it (settings, the cluster, metrics, the logger, the
// authenticator, the statement cache and a few callbacks), and Session,
// the connection a request came on (protocol version, keyspace, address,
// logger, and the answer of a request started on the reader). It never
// sees a connection or the server. It imports cqlwire for the wire
// format, cluster for the shards and snapshots, auth for permissions,
// repair for read repair, and translate, pgschema and sharding; nothing
// above it.
//
// A request's one way: the message's body is decoded, its statement
// planned or looked up (once per keyspace and text), its values bound on
// a pooled Execution, each partition keyed once from the raw bytes and
// placed on one topology snapshot, its ops submitted to the shard pools,
// and the answer completed, either by the request's goroutine
// (QueryMessage, ExecuteMessage, BatchMessage) or, for the EXECUTEs of
// point reads from one replica and plain one-row writes that the
// connection's reader starts itself (BindExecute, then Execution.Start),
// by the pool goroutine that finishes the op the answer waits for
// (async.go). Both build a write the same way (prepareWrite); only the
// completion differs.
//
// Invariants: an Execution is released once by its last holder, and one
// an abandoned op may still touch is never reused; a batch's writes reach
// each shard as one transaction; a partition's lightweight transactions
// and SERIAL reads run Paxos on a quorum of its replicas, and nothing is
// proposed under a ballot a quorum has not promised (paxos.go);
// errors leave as Go errors, which the gateway alone turns into CQL error
// messages.
package exec
