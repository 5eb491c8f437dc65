// Package pgschema is cqlpg's storage model: CQL types and how Postgres
// holds them, the layout of each table, and the catalog that every shard
// keeps of the CQL schema.
//
// In: CQL definitions (keyspaces, tables, types) and a Postgres connection.
// Out: DDL applied to a shard, and immutable Schema snapshots read back.
//
// Invariants:
//   - A keyspace is a Postgres schema and a table is a Postgres table with
//     one column per CQL column, in its natural type; text sorts by bytes
//     (COLLATE "C") as Cassandra sorts it.
//   - Every table leads with "_token" (the partition's Murmur3 token) and
//     has a unique index on (_token, partition key, clustering columns),
//     each clustering column ASC or DESC as CLUSTERING ORDER says.
//   - Each regular column c has two bookkeeping columns, "c$wt" (write
//     time, µs) and "c$exp" (expiry, epoch seconds); rows carry "_row_wt"
//     and "_row_exp" (the INSERT row marker) and "_del_wt" (the newest row
//     deletion). A value column holds only the winning, reconciled cell.
//   - Every table and static table has the trigger cqlpg_sql_write
//     (sqlwrites.go), regenerated with each change of its columns, which
//     completes rows written with plain SQL; connections that write the
//     gateway's SQL set cqlpg.writer = gateway (GatewayConnString), which
//     it skips.
//   - Schemas and tables are immutable once built; a new snapshot replaces
//     an old one. A load leaves out, and lists (Schema.Unloadable), the
//     objects whose catalog rows it cannot read, never failing whole.
//   - Text and ascii values are stored escaped (escapeText), so that
//     U+0000 fits; a dropped column's cells are set aside, not dropped,
//     until a column of its name comes back (DropColumns, AddColumns).
//   - DDL outside cqlpg that would change a relation cqlpg made is refused
//     by an event trigger (migration 0012); cqlpg's own DDL runs with
//     cqlpg.ddl = on, which records the layout it leaves.
package pgschema
