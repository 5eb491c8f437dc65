package main

import (
	"fmt"
	"os"
)

const usage = `cqlpg runs Cassandra applications on PostgreSQL.

Usage:
  cqlpg serve [flags]   serve CQL on PostgreSQL shards (cqlpg serve -h for flags)
  cqlpg config [flags]  print the configuration cqlpg serve would run with, as YAML (same flags)
  cqlpg repair [flags] [KEYSPACE[.TABLE]]
                        bring the replicas of the shards to the same data (cqlpg repair -h for flags)
  cqlpg advise [flags] [KEYSPACE[.TABLE]]
                        report where tables break the data modelling rules (cqlpg advise -h for flags)
  cqlpg ring [flags]    print the shards of the token ring, their tokens and ownership
  cqlpg shard status [flags] [KEYSPACE]
                        print the cluster's members as nodetool status does
  cqlpg shard add [flags] URL
                        join a new PostgreSQL shard to the running cluster, streaming its data
  cqlpg shard decommission|remove NAME, cqlpg shard replace NAME URL, cqlpg shard abort
                        take a live or dead shard out of the ring, replace a dead one, or roll one back
  cqlpg cleanup [flags] [KEYSPACE[.TABLE]]
                        delete from each shard the rows of ranges it no longer replicates
  cqlpg load [flags] KEYSPACE.TABLE FILE.csv
                        load a CSV file in cqlsh's COPY format into a table (cqlpg load -h for flags)
  cqlpg unload [flags] KEYSPACE.TABLE FILE.csv
                        write a table to a CSV file in cqlsh's COPY format
  cqlpg exec [flags] -e CQL | -f FILE.cql
                        run CQL on a gateway and print the results as cqlsh does
  cqlpg migrate schema --origin HOST:PORT [flags]
                        create a live CQL cluster's keyspaces, types, tables and indexes on cqlpg
  cqlpg bench WORKLOAD  measure cqlpg against PostgreSQL used directly (cqlpg bench for workloads)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		os.Exit(serve(os.Args[2:]))
	case "config":
		os.Exit(printConfig(os.Args[2:]))
	case "bench":
		os.Exit(bench(os.Args[2:]))
	case "repair":
		os.Exit(repairCommand(os.Args[2:]))
	case "advise":
		os.Exit(adviseCommand(os.Args[2:]))
	case "ring":
		os.Exit(ring(os.Args[2:]))
	case "shard":
		os.Exit(shardCommand(os.Args[2:]))
	case "cleanup":
		os.Exit(cleanupCommand(os.Args[2:]))
	case "load":
		os.Exit(load(os.Args[2:]))
	case "unload":
		os.Exit(unload(os.Args[2:]))
	case "exec":
		os.Exit(execCQL(os.Args[2:]))
	case "migrate":
		os.Exit(migrateCommand(os.Args[2:]))
	case "-h", "-help", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "cqlpg: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
}
