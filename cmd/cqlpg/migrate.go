package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/migrate"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

const migrateUsage = `Usage: cqlpg migrate schema --origin HOST:PORT [flags]

Moves a live CQL cluster (Cassandra 3.11 to 5.0, ScyllaDB, or another
cqlpg) onto the cqlpg cluster of the shards given with --shard (the
managed local shards without it).

  schema   reads the origin's schema from system_schema and creates its
           keyspaces, types, tables and indexes on cqlpg, mapping the
           replication's datacenters with --dc-map; prints what it
           leaves as it is and what it cannot carry

Everything that stops an import (an origin it cannot reach or log in
to, a datacenter the target lacks, a table that exists on both sides
with other columns or keys) is found before the first write.
`

func migrateCommand(args []string) int {
	if len(args) == 0 || args[0] != "schema" {
		fmt.Fprint(os.Stderr, migrateUsage)
		return 2
	}
	return migrateSchema(args[1:])
}

// originFlags name the cluster a migration reads from.
type originFlags struct {
	addr, auth *string
	timeout    *time.Duration
}

func addOriginFlags(fs *flag.FlagSet) originFlags {
	return originFlags{
		addr:    fs.String("origin", "", "`HOST:PORT` of a node of the origin cluster"),
		auth:    fs.String("origin-auth", "", "`USER:PASSWORD` to log in to the origin with"),
		timeout: fs.Duration("origin-timeout", 10*time.Second, "time the origin has to answer a request"),
	}
}

func migrateSchema(args []string) int {
	const command = "cqlpg migrate schema"
	fs := flag.NewFlagSet("migrate schema", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), migrateUsage+"\nFlags:\n"); fs.PrintDefaults() }
	origin := addOriginFlags(fs)
	keyspaces := fs.String("keyspaces", "", "comma-separated `keyspaces` to import (default: every user keyspace)")
	dcMapFlag := fs.String("dc-map", "", "`FROM=TO,...`: the target datacenter each origin datacenter's replicas go to")
	dryRun := fs.Bool("dry-run", false, "print the statements without running them")
	shards := addShardFlags(fs)
	if positional, err := parseInterleaved(fs, args); err != nil || len(positional) > 0 || *origin.addr == "" {
		fs.Usage()
		return 2
	}
	dcMap := map[string]string{}
	for _, pair := range splitList(*dcMapFlag) {
		from, to, ok := strings.Cut(pair, "=")
		if !ok || from == "" || to == "" {
			fmt.Fprintf(os.Stderr, "%s: --dc-map %q is not FROM=TO\n", command, pair)
			return 2
		}
		dcMap[from] = to
	}
	src, err := migrate.Connect(*origin.addr, *origin.auth, *origin.timeout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: origin: %v\n", command, err)
		return 1
	}
	defer src.Close()
	want, err := migrate.ReadSchema(src, splitList(*keyspaces))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: reading the origin's schema: %v\n", command, err)
		return 1
	}
	return shards.with(command, func(ctx context.Context, c *cluster.Cluster, _ []string) int {
		var dcs []string
		var placed []cluster.ShardConfig
		for _, s := range c.Topology().Shards {
			if !slices.Contains(dcs, s.Info.DC) {
				dcs = append(dcs, s.Info.DC)
			}
			placed = append(placed, cluster.ShardConfig{URL: s.URL, Datacenter: s.Info.DC, Rack: s.Info.Rack})
		}
		slices.Sort(dcs)
		gw, err := serveGatewayOn(ctx, placed, 2, false)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: target: %v\n", command, err)
			return 1
		}
		defer gw.Shutdown(context.Background())
		dst, err := migrate.Connect(gw.Addr().String(), "", 60*time.Second)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: target: %v\n", command, err)
			return 1
		}
		defer dst.Close()
		have, err := migrate.ReadSchema(dst, nil)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: reading the target's schema: %v\n", command, err)
			return 1
		}
		plan, err := migrate.PlanSchema(want, have, dcs, dcMap)
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				fmt.Fprintf(os.Stderr, "%s: %s\n", command, line)
			}
			fmt.Fprintf(os.Stderr, "%s: nothing was created\n", command)
			return 1
		}
		for _, n := range plan.Notes {
			fmt.Println(n)
		}
		for _, st := range plan.Statements {
			if *dryRun {
				fmt.Println(st.CQL + ";")
				continue
			}
			if err := dst.Query(st.CQL).WithContext(ctx).Exec(); err != nil {
				fmt.Fprintf(os.Stderr, "%s: creating %s: %v\n%s: the statement was: %s\n", command, st.What, err, command, st.CQL)
				fmt.Fprintf(os.Stderr, "%s: what was created stays; run the command again to go on\n", command)
				return 1
			}
			fmt.Println("created", st.What)
		}
		return 0
	})
}

// splitList splits a comma-separated flag, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
