package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cluster"
)

const cleanupUsage = `Usage: cqlpg cleanup [flags] [KEYSPACE[.TABLE]]

cleanup has each shard delete the rows of the token ranges it no longer
replicates: the copies a shard add, decommission, removal or a lower
replication factor left on the shards that gave the ranges up, as
nodetool cleanup does. It refuses while a topology operation is in
progress or a shard is down.

Flags:
`

func cleanupCommand(args []string) int {
	fs := flag.NewFlagSet("cleanup", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), cleanupUsage); fs.PrintDefaults() }
	shards := addShardFlags(fs)
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(positional) > 1 {
		fs.Usage()
		return 2
	}
	keyspace, table := "", ""
	if len(positional) == 1 {
		keyspace, table, _ = strings.Cut(positional[0], ".")
	}
	return shards.with("cqlpg cleanup", func(ctx context.Context, c *cluster.Cluster, _ []string) int {
		start := time.Now()
		rows, err := c.Cleanup(ctx, keyspace, table, func(shard, table string, rows int64) {
			if rows > 0 {
				fmt.Fprintf(os.Stderr, "%s: %s: deleted %d rows\n", shard, table, rows)
			}
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "cqlpg cleanup:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "cleanup deleted %d rows in %s\n", rows, time.Since(start).Round(time.Millisecond))
		return 0
	})
}
