package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

const ringUsage = `Usage: cqlpg ring [flags]

Prints the shards of the token ring: each one's name, host id,
datacenter, rack, number of tokens and share of the ring, then every
token in ring order with the shard that owns the range ending at it.

Flags:
`

func ring(args []string) int {
	fs := flag.NewFlagSet("ring", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), ringUsage); fs.PrintDefaults() }
	shards := addShardFlags(fs)
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(positional) > 0 {
		fs.Usage()
		return 2
	}
	return shards.with("cqlpg ring", func(_ context.Context, c *cluster.Cluster, _ []string) int {
		printRing(os.Stdout, c.Topology().Ring)
		return 0
	})
}

// printRing writes the ring as ring prints it.
func printRing(out io.Writer, r *sharding.Ring) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "Shard\tHost ID\tDatacenter\tRack\tTokens\tOwns")
	shards, owns := r.Shards(), r.Ownership()
	for i, s := range shards {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%.2f%%\n", s.Name, pgschema.UUIDText(s.HostID[:]), s.DC, s.Rack, len(s.Tokens), owns[i]*100)
	}
	w.Flush()
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "Token\tShard\tOwns\t")
	tokens := r.Tokens()
	for i, t := range tokens {
		rg := r.Range(i)
		share := float64(uint64(rg.End)-uint64(rg.Start)) / (1 << 64)
		if len(tokens) == 1 {
			share = 1
		}
		fmt.Fprintf(w, "%d\t%s\t%.2f%%\t\n", t, shards[r.Owner(i)].Name, share*100)
	}
	w.Flush()
}
