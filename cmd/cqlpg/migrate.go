package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/bulk"
	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/migrate"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

const migrateUsage = `Usage: cqlpg migrate schema --origin HOST:PORT [flags]
       cqlpg migrate copy --origin HOST:PORT [flags] KEYSPACE[.TABLE]

Moves a live CQL cluster (Cassandra 3.11 to 5.0, ScyllaDB, or another
cqlpg) onto the cqlpg cluster of the shards given with --shard (the
managed local shards without it).

  schema   reads the origin's schema from system_schema and creates its
           keyspaces, types, tables and indexes on cqlpg, mapping the
           replication's datacenters with --dc-map; prints what it
           leaves as it is and what it cannot carry
  copy     copies a keyspace's tables, or one table, reading the origin
           by token range in parallel, each cell with its write time and
           remaining TTL, so that a copy and writes made meanwhile on
           both clusters commute: the newer cell wins wherever it lands

Everything that stops an import (an origin it cannot reach or log in
to, a datacenter the target lacks, a table that exists on both sides
with other columns or keys) is found before the first write.
`

func migrateCommand(args []string) int {
	switch {
	case len(args) > 0 && args[0] == "schema":
		return migrateSchema(args[1:])
	case len(args) > 0 && args[0] == "copy":
		return migrateCopy(args[1:])
	}
	fmt.Fprint(os.Stderr, migrateUsage)
	return 2
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
	return withTarget(command, shards, func(ctx context.Context, tg *target) int {
		plan, err := migrate.PlanSchema(want, tg.schema, tg.dcs, dcMap)
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
			if err := tg.sess.Query(st.CQL).WithContext(ctx).Exec(); err != nil {
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

// target is the cqlpg cluster a migration writes to, with a gateway of
// this process on it.
type target struct {
	cluster *cluster.Cluster
	urls    []string
	dcs     []string // its shards' datacenters, sorted
	sess    *gocql.Session
	schema  *migrate.Schema
}

// withTarget opens the shards, starts a gateway on them, reads their
// schema and runs fn.
func withTarget(command string, shards *shardFlags, fn func(ctx context.Context, tg *target) int) int {
	return shards.with(command, func(ctx context.Context, c *cluster.Cluster, urls []string) int {
		tg := &target{cluster: c, urls: urls}
		var placed []cluster.ShardConfig
		for _, s := range c.Topology().Shards {
			if !slices.Contains(tg.dcs, s.Info.DC) {
				tg.dcs = append(tg.dcs, s.Info.DC)
			}
			placed = append(placed, cluster.ShardConfig{URL: s.URL, Datacenter: s.Info.DC, Rack: s.Info.Rack})
		}
		slices.Sort(tg.dcs)
		gw, err := serveGatewayOn(ctx, placed, 2, false)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: target: %v\n", command, err)
			return 1
		}
		defer gw.Shutdown(context.Background())
		if tg.sess, err = migrate.Connect(gw.Addr().String(), "", 60*time.Second); err != nil {
			fmt.Fprintf(os.Stderr, "%s: target: %v\n", command, err)
			return 1
		}
		defer tg.sess.Close()
		if tg.schema, err = migrate.ReadSchema(tg.sess, nil); err != nil {
			fmt.Fprintf(os.Stderr, "%s: reading the target's schema: %v\n", command, err)
			return 1
		}
		return fn(ctx, tg)
	})
}

const copyUsage = `Usage: cqlpg migrate copy --origin HOST:PORT [flags] KEYSPACE[.TABLE]

Copies the rows of a table, or of every table of a keyspace, from the
origin to the cqlpg cluster, whose schema must hold them already (cqlpg
migrate schema). The origin is read by token range, --parallel ranges at
once, with each cell's write time and TTL; the rows are written to every
replica through the loader's staging path, each cell at its own write
time and expiring when it does on the origin. Run while the application
writes to both clusters, the copy and those writes commute: the newer
cell wins wherever it lands.

A collection or non-frozen user type, whose write time CQL does not
give, takes the newest write time of its row's other cells, and keeps
no TTL. A table with counters is refused: a counter's value cannot be
copied with its write times.

With --resume FILE, the ranges copied are recorded in FILE; the same
command run again after a crash copies only the others.

Flags:
`

func migrateCopy(args []string) int {
	const command = "cqlpg migrate copy"
	fs := flag.NewFlagSet("migrate copy", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), copyUsage); fs.PrintDefaults() }
	origin := addOriginFlags(fs)
	parallel := fs.Int("parallel", 4, "token `ranges` copied at once")
	splits := fs.Int("splits", 256, "token `ranges` the ring is cut into")
	pageSize := fs.Int("page-size", 1000, "`rows` per page read from the origin, and per write")
	rate := fs.Float64("rate", 0, "at most this many `rows` a second (0: no limit)")
	resume := fs.String("resume", "", "`file` recording the ranges copied, to go on from after a crash")
	shards := addShardFlags(fs)
	positional, err := parseInterleaved(fs, args)
	if err != nil || len(positional) != 1 || *origin.addr == "" || *parallel < 1 || *splits < 1 || *pageSize < 1 {
		fs.Usage()
		return 2
	}
	ksName, tableName, _ := strings.Cut(positional[0], ".")
	src, err := migrate.Connect(*origin.addr, *origin.auth, *origin.timeout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: origin: %v\n", command, err)
		return 1
	}
	defer src.Close()
	want, err := migrate.ReadSchema(src, []string{ksName})
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: reading the origin's schema: %v\n", command, err)
		return 1
	}
	ks := want.Keyspaces[0]
	tables := ks.Tables
	if tableName != "" {
		i := slices.IndexFunc(tables, func(t *migrate.Table) bool { return t.Name == tableName })
		if i < 0 {
			fmt.Fprintf(os.Stderr, "%s: the origin has no table %s\n", command, positional[0])
			return 1
		}
		tables = tables[i : i+1]
	}
	return withTarget(command, shards, func(ctx context.Context, tg *target) int {
		if err := migrate.CheckTables(ks, tables, tg.schema); err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				fmt.Fprintf(os.Stderr, "%s: %s\n", command, line)
			}
			fmt.Fprintf(os.Stderr, "%s: nothing was copied\n", command)
			return 1
		}
		dst, err := bulk.Open(ctx, tg.cluster.Topology().Ring, tg.urls)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: target: %v\n", command, err)
			return 1
		}
		for _, t := range tables {
			p := newRateLine(os.Stderr)
			rows, err := migrate.Copy(ctx, src, dst, ks, t, migrate.CopyOptions{
				Parallel: *parallel, Splits: *splits, PageSize: *pageSize, Rate: *rate, State: *resume,
				Progress: func(cp migrate.CopyProgress) {
					if cp.Rows == cp.StartRows && cp.RangesDone > 0 {
						fmt.Fprintf(os.Stderr, "%s: %s: resuming with %d of %d token ranges (%d rows) copied; ranges not "+
							"recorded as done are copied again, which changes nothing\n", command, cp.Table, cp.RangesDone, cp.Ranges, cp.Rows)
					}
					p.set(cp.Rows-cp.StartRows, cp.Rows, fmt.Sprintf("%s: %d of %d token ranges", cp.Table, cp.RangesDone, cp.Ranges))
				},
			})
			p.stop()
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", command, err)
				if *resume != "" {
					fmt.Fprintf(os.Stderr, "%s: the ranges copied are recorded in %s; run the same command again to go on\n", command, *resume)
				}
				return 1
			}
			fmt.Printf("copied %d rows of %s.%s in %v\n", rows, ks.Name, t.Name, p.elapsed().Round(time.Millisecond))
		}
		if *resume != "" {
			os.Remove(*resume)
		}
		return 0
	})
}
