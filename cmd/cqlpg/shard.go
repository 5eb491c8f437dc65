package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/repair"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

const shardUsage = `Usage:
  cqlpg shard status [flags] [KEYSPACE]
  cqlpg shard add [flags] URL

status prints the cluster's members as nodetool status does, by
datacenter: state (U up, D down; N normal, J joining, L leaving), data
size, tokens, share of the ring, host id and rack. With KEYSPACE the share
is effective: of the token space each shard replicates under that
keyspace's replication.

add joins the PostgreSQL database at URL, which must hold no keyspace, to
the running cluster: it takes the catalog and tokens that balance the
ring, joins as a pending replica of its ranges (writes reach it, reads do
not yet), receives their rows from the replicas that hold them, and then
serves them. Gateways follow each step within a second, and each step
waits until every live gateway has. Run it again to resume a join cut
short. The shards that gave up ranges keep their copies until cqlpg
cleanup.

Flags:
`

func shardCommand(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, shardUsage)
		return 2
	}
	switch args[0] {
	case "status":
		return shardStatusCommand(args[1:])
	case "add":
		return shardAddCommand(args[1:])
	}
	fmt.Fprint(os.Stderr, shardUsage)
	return 2
}

func shardStatusCommand(args []string) int {
	fs := flag.NewFlagSet("shard status", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), shardUsage); fs.PrintDefaults() }
	shards := addShardFlags(fs)
	positional, err := parseInterleaved(fs, args)
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

func shardAddCommand(args []string) int {
	fs := flag.NewFlagSet("shard add", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), shardUsage); fs.PrintDefaults() }
	shards := addShardFlags(fs)
	name := fs.String("name", "", "the new shard's `name` (default: the next free shardN)")
	dc := fs.String("dc", "datacenter1", "the new shard's `datacenter`")
	rack := fs.String("rack", "rack1", "the new shard's `rack`")
	numTokens := fs.Int("num-tokens", 16, "how many `tokens` the new shard takes")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(positional) != 1 || *numTokens < 1 {
		fs.Usage()
		return 2
	}
	return shards.with("cqlpg shard add", func(ctx context.Context, c *cluster.Cluster, _ []string) int {
		if err := refuseCounters(c.Schema()); err != nil {
			fmt.Fprintln(os.Stderr, "cqlpg shard add:", err)
			return 1
		}
		err := c.Join(ctx, positional[0], cluster.JoinOptions{Name: *name, Datacenter: *dc, Rack: *rack, NumTokens: *numTokens,
			Stream: streamRanges(os.Stderr, c), Progress: func(step string) { fmt.Fprintln(os.Stderr, step) },
			GatewayTimeout: 10 * time.Second, BarrierLimit: 30 * time.Second})
		if err != nil {
			fmt.Fprintln(os.Stderr, "cqlpg shard add:", err)
			return 1
		}
		return 0
	})
}

// refuseCounters refuses a topology change while a counter table exists:
// its shards' counts cannot be streamed without counting twice yet.
func refuseCounters(s *pgschema.Schema) error {
	for _, ks := range s.Keyspaces() {
		for _, t := range ks.SortedTables() {
			if t.IsCounter() && !t.Virtual {
				return fmt.Errorf("counter table %s.%s: shards cannot stream counters yet", ks.Name, t.Name)
			}
		}
	}
	return nil
}

// streamRanges returns the streaming of a join: every range the joining
// shard will replicate, of every table, reconciled from the replicas that
// hold it now onto the joiner (repair.RangeOn), so that the joiner holds
// their merge, write times, expiries and deletions included. Progress
// goes to out.
func streamRanges(out io.Writer, c *cluster.Cluster) func(ctx context.Context, topo *sharding.Topology, joiner int) error {
	return func(ctx context.Context, topo *sharding.Topology, joiner int) error {
		type piece struct {
			t          *pgschema.Table
			start, end int64
			replicas   []int
		}
		var pieces []piece
		for _, ks := range c.Schema().Keyspaces() {
			if ks.Virtual || pgschema.IsSystemKeyspace(ks.Name) {
				continue
			}
			now, next := topo.Placement(ks.Replication), topo.Next.Placement(ks.Replication)
			for _, t := range ks.SortedTables() {
				for i := range topo.Next.Len() {
					if !slices.Contains(next.RangeReplicas(i), joiner) {
						continue
					}
					r := topo.Next.Range(i)
					pieces = append(pieces, piece{t, int64(r.Start), int64(r.End), append(slices.Clone(now.Replicas(r.End)), joiner)})
				}
			}
		}
		start := time.Now()
		for i, p := range pieces {
			if err := repair.RangeOn(ctx, topo, p.t, p.start, p.end, p.replicas); err != nil {
				return fmt.Errorf("%s.%s (%d, %d]: %w", p.t.Keyspace, p.t.Name, p.start, p.end, err)
			}
			if done := i + 1; done%16 == 0 || done == len(pieces) {
				elapsed := time.Since(start)
				left := time.Duration(float64(elapsed) / float64(done) * float64(len(pieces)-done))
				fmt.Fprintf(out, "streamed %d of %d ranges, %s elapsed, about %s left\n", done, len(pieces),
					elapsed.Round(time.Millisecond), left.Round(time.Second))
			}
		}
		return nil
	}
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
