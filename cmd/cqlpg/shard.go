package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"text/tabwriter"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
)

const shardUsage = `Usage: cqlpg shard status [flags] [KEYSPACE]

Prints the cluster's members as nodetool status does, by datacenter: state
(U up, D down; N normal, J joining, L leaving), data size, tokens, share of
the ring, host id and rack. With KEYSPACE the share is effective: of the
token space each shard replicates under that keyspace's replication.

Flags:
`

func shardCommand(args []string) int {
	if len(args) == 0 || args[0] != "status" {
		fmt.Fprint(os.Stderr, shardUsage)
		return 2
	}
	fs := flag.NewFlagSet("shard status", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), shardUsage); fs.PrintDefaults() }
	shards := addShardFlags(fs)
	positional, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return 2
	}
	if len(positional) > 1 {
		fs.Usage()
		return 2
	}
	keyspace := ""
	if len(positional) == 1 {
		keyspace = positional[0]
	}
	return shards.with("cqlpg shard status", func(ctx context.Context, c *cluster.Cluster, _ []string) int {
		if err := shardStatus(ctx, os.Stdout, c, keyspace); err != nil {
			fmt.Fprintln(os.Stderr, "cqlpg shard status:", err)
			return 1
		}
		return 0
	})
}

// shardStatus prints the members of c as nodetool status does.
func shardStatus(ctx context.Context, out io.Writer, c *cluster.Cluster, keyspace string) error {
	topo := c.Topology()
	owns := topo.Ring.Ownership()
	heading := "Owns"
	if keyspace != "" {
		ks := c.Schema().Keyspace(keyspace)
		if ks == nil {
			return fmt.Errorf("keyspace %s does not exist", keyspace)
		}
		owns = topo.Placement(ks.Replication).Ownership()
		heading = "Owns (effective)"
	}
	members, version, err := pgschema.LoadMembers(ctx, c.Control()[0])
	if err != nil {
		return err
	}
	state := map[[16]byte]string{}
	for _, m := range members {
		state[m.HostID] = m.State
	}
	// Each shard's data: the tables of every keyspace, with their indexes.
	sizes := make([]int64, len(topo.Shards))
	var wg sync.WaitGroup
	for i, pool := range c.Control() {
		wg.Go(func() {
			if pool.QueryRow(ctx, `SELECT coalesce(sum(total_bytes), 0)::bigint FROM cqlpg.table_list`).Scan(&sizes[i]) != nil {
				sizes[i] = -1
			}
		})
	}
	wg.Wait()
	byDC := map[string][]int{}
	var dcs []string
	for i, s := range topo.Shards {
		if _, ok := byDC[s.Info.DC]; !ok {
			dcs = append(dcs, s.Info.DC)
		}
		byDC[s.Info.DC] = append(byDC[s.Info.DC], i)
	}
	sort.Strings(dcs)
	for n, dc := range dcs {
		if n > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "Datacenter: %s\n", dc)
		fmt.Fprintln(out, "Status=Up/Down")
		fmt.Fprintln(out, "|/ State=Normal/Leaving/Joining/Moving")
		w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintf(w, "--\tShard\tLoad\tTokens\t%s\tHost ID\tRack\n", heading)
		for _, i := range byDC[dc] {
			s := topo.Shards[i]
			up := "U"
			if !s.Pool.Alive() {
				up = "D"
			}
			load := "?"
			if sizes[i] >= 0 {
				load = byteSize(sizes[i])
			}
			fmt.Fprintf(w, "%s%s\t%s\t%s\t%d\t%.1f%%\t%s\t%s\n", up, stateLetter(state[s.Info.HostID]), s.Info.Name, load,
				len(s.Info.Tokens), owns[i]*100, pgschema.UUIDText(s.Info.HostID[:]), s.Info.Rack)
		}
		w.Flush()
	}
	fmt.Fprintf(out, "\nRing version %d; no topology operation in progress.\n", version)
	return nil
}

// stateLetter is a member state's letter in nodetool status.
func stateLetter(state string) string {
	switch state {
	case pgschema.MemberJoining:
		return "J"
	case pgschema.MemberLeaving:
		return "L"
	}
	return "N"
}
