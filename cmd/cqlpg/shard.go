package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
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
  cqlpg shard decommission [flags] NAME
  cqlpg shard remove [flags] NAME
  cqlpg shard replace [flags] NAME URL
  cqlpg shard abort [flags]

status prints the cluster's members as nodetool status does, by
datacenter: state (U up, D down; N normal, J joining, L leaving), data
size, tokens, share of the ring, host id and rack, and the topology
operation in progress. With KEYSPACE the share is effective: of the token
space each shard replicates under that keyspace's replication.

add joins the PostgreSQL database at URL, which must hold no keyspace, to
the running cluster: it takes the catalog and tokens that balance the
ring, joins as a pending replica of its ranges (writes reach it, reads do
not yet), receives their rows from the replicas that hold them, and then
serves them. The shards that gave up ranges keep their copies until
cqlpg cleanup.

decommission takes a live shard out of the ring: the shards that take
its ranges over receive them, merged from it and the other replicas,
then it leaves. Its database keeps its data.

remove takes a dead shard out of the ring: the shards that take its
ranges over receive them from the replicas that are up.

replace has the empty database at URL take a dead shard's tokens,
datacenter and rack, and receive its ranges from the replicas that are up.

Gateways follow each step within a second, and each step waits until
every live gateway has. One operation runs at a time; one cut short is
resumed by running its command again, or rolled back by abort.

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
		return shardMoveCommand("add", args[1:], 1)
	case "decommission":
		return shardMoveCommand("decommission", args[1:], 1)
	case "remove":
		return shardMoveCommand("remove", args[1:], 1)
	case "replace":
		return shardMoveCommand("replace", args[1:], 2)
	case "abort":
		return shardMoveCommand("abort", args[1:], 0)
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

// shardMoveCommand runs a topology operation (add, decommission, remove,
// replace or abort) that takes args positional arguments.
func shardMoveCommand(op string, args []string, want int) int {
	command := "cqlpg shard " + op
	fs := flag.NewFlagSet("shard "+op, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), shardUsage); fs.PrintDefaults() }
	shards := addShardFlags(fs)
	var join cluster.JoinOptions
	force := false
	switch op {
	case "add", "replace":
		fs.StringVar(&join.Name, "name", "", "the new shard's `name` (default: the next free shardN)")
		fs.BoolVar(&join.Force, "force", false, "wipe a database that a join cut short and then rolled back left behind")
	case "decommission":
		fs.BoolVar(&force, "force", false, "decommission even if fewer shards than a keyspace's replication factor remain")
	}
	if op == "add" {
		fs.StringVar(&join.Datacenter, "dc", "datacenter1", "the new shard's `datacenter`")
		fs.StringVar(&join.Rack, "rack", "rack1", "the new shard's `rack`")
		fs.IntVar(&join.NumTokens, "num-tokens", 16, "how many `tokens` the new shard takes")
	}
	throughput := fs.Float64("stream-throughput", 0, "limit streaming to this many `rows` a second (0: no limit)")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	if len(positional) != want || (op == "add" && join.NumTokens < 1) {
		fs.Usage()
		return 2
	}
	return shards.with(command, func(ctx context.Context, c *cluster.Cluster, _ []string) int {
		fail := func(err error) int {
			fmt.Fprintln(os.Stderr, command+":", err)
			return 1
		}
		operation := strings.Join(append([]string{"shard", op}, positional[:min(1, len(positional))]...), " ")
		if op == "add" {
			operation = "shard add" // its argument is a connection string
		}
		join.OpOptions = cluster.OpOptions{Stream: streamRanges(os.Stderr, c, *throughput, operation),
			Progress: func(step string) { fmt.Fprintln(os.Stderr, step) }, GatewayTimeout: 10 * time.Second,
			BarrierLimit: 30 * time.Second}
		switch op {
		case "add":
			err = c.Join(ctx, positional[0], join)
		case "decommission":
			err = c.Decommission(ctx, positional[0], force, join.OpOptions)
		case "remove":
			err = c.Remove(ctx, positional[0], join.OpOptions)
		case "replace":
			err = c.Replace(ctx, positional[0], positional[1], join)
		case "abort":
			var what string
			if what, err = c.Abort(ctx, join.OpOptions); err == nil {
				fmt.Fprintf(os.Stderr, "rolled back: %s\n", what)
			}
		}
		if err != nil {
			return fail(err)
		}
		return 0
	})
}

// streamRanges returns the streaming of a movement (repair.Stream): every
// range a replica gains, of every table, from the replicas that hold it
// now but lost. Progress goes to out, and, at most once a second, to
// every member's cqlpg.topology_progress under operation's name, for the
// gateways' /metrics.
func streamRanges(out io.Writer, c *cluster.Cluster, perSecond float64, operation string) func(ctx context.Context, topo *sharding.Topology, lost int) error {
	return func(ctx context.Context, topo *sharding.Topology, lost int) error {
		pieces, err := repair.Pieces(topo, c.Schema(), "", lost, func(ks *pgschema.Keyspace) []sharding.Movement {
			return topo.Movements(ks.Replication)
		})
		if err != nil {
			return err
		}
		start := time.Now()
		progress := pgschema.TopologyProgress{Operation: operation, RangesTotal: int64(len(pieces)), StartedAt: start}
		var reported time.Time
		report := func() {
			reported = time.Now()
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			for i, pool := range c.Control() {
				if i != lost {
					pgschema.SaveTopologyProgress(rctx, pool, progress)
				}
			}
		}
		report()
		rows, err := repair.Stream(ctx, topo, pieces, perSecond, func(p repair.StreamProgress) {
			progress.RangesDone, progress.Rows, progress.Bytes = int64(p.Done), p.Rows, p.Bytes
			if time.Since(reported) >= time.Second || p.Done == p.Total {
				report()
			}
			if p.Done%16 == 0 || p.Done == p.Total {
				left := time.Duration(float64(p.Elapsed) / float64(p.Done) * float64(p.Total-p.Done))
				fmt.Fprintf(out, "streamed %d of %d ranges, %d rows, %s (%.0f rows/s, %s/s), %s elapsed, about %s left\n", p.Done,
					p.Total, p.Rows, byteSize(p.Bytes), float64(p.Rows)/p.Elapsed.Seconds(), byteSize(int64(float64(p.Bytes)/p.Elapsed.Seconds())),
					p.Elapsed.Round(time.Millisecond), left.Round(time.Second))
			}
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "streamed %d ranges, %d rows, %s in %s\n", len(pieces), rows, byteSize(progress.Bytes), time.Since(start).Round(time.Millisecond))
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
	if op := cluster.Operation(members); op != "" {
		fmt.Fprintf(out, "\nRing version %d; in progress: %s.\n", version, op)
	} else {
		fmt.Fprintf(out, "\nRing version %d; no topology operation in progress.\n", version)
	}
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
