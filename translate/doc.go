// Package translate is cqlpg's language stage: it scans and parses CQL,
// checks statements against one schema snapshot with Cassandra's rules and
// exact error texts, and plans them into SQL for the shards.
//
// In: CQL text, the session's keyspace and a pgschema.Schema.
// Out: a Plan holding the prepared-statement metadata, the route (single
// partitions or token-range scans) and SQL built once with squirrel, with
// every value a parameter (Param) filled in by the gateway at execution.
//
// Invariants:
//   - No value from a client is ever spliced into SQL text: constants are
//     serialized at planning time and travel as parameters like bound
//     values, and identifiers are quoted.
//   - Plans name partitions and token ranges, never shards: placing them on
//     replicas is the executor's job.
//   - Plans are immutable and shared by all executions of a statement.
package translate
