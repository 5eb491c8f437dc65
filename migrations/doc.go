// Package migrations holds the SQL that creates cqlpg's catalog in every
// shard, embedded in the binary and applied with golang-migrate.
//
// In: a connection string of a shard. Out: the shard's "cqlpg" schema at the
// newest version. Migrations only move forward while a gateway runs; the
// .down.sql files exist for operators who remove cqlpg from a server.
// golang-migrate's advisory lock lets several gateways start at once.
//
// It imports golang-migrate and pgx only; pgschema holds the SQL that
// reads and writes what these migrations create. Invariant: a migration,
// once released, never changes; a change to the catalog is a new one.
package migrations
