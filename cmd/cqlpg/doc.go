// Command cqlpg runs Cassandra applications on PostgreSQL: it serves the
// Cassandra native protocol and stores data in PostgreSQL shards.
//
// Usage:
//
//	cqlpg serve [--listen HOST:PORT] [--http HOST:PORT] [--shard POSTGRES_URL]...
//	            [--local-shards N] [--data-dir DIR] [--config FILE]
//	cqlpg config                 print the configuration serve would run with, as YAML
//	cqlpg exec [-e CQL | -f FILE] run CQL as cqlsh does and print what it prints
//	cqlpg load | unload TABLE FILE
//	                             copy CSV in cqlsh COPY's format in and out
//	cqlpg repair [KEYSPACE[.TABLE]]
//	cqlpg ring                   the token ring and each shard's share
//	cqlpg bench ...              the benchmark tool (docs/benchmarks.md)
//
// README.md gives every flag. The command owns flags, configuration files,
// signals and the managed local shards; it is the top of the import order
// (nothing imports it) and the one package that imports sharding/localpg,
// which starts PostgreSQL servers (TestLayering).
package main
