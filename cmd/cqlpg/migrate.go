package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/bulk"
	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/migrate"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
)

const migrateUsage = `Usage: cqlpg migrate schema --origin HOST:PORT [flags]
       cqlpg migrate copy --origin HOST:PORT [flags] KEYSPACE[.TABLE]
       cqlpg migrate diff --origin HOST:PORT [--fix] [--fix-origin] [flags] KEYSPACE[.TABLE]

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
  diff     compares the origin's rows with the target's, range by range,
           and reports each missing, extra or differing row by its key;
           --fix writes the origin's cells of missing and differing rows
           to the target, --fix-origin the target's newer cells to the
           origin

Dual writes, which keep both clusters written while the application
moves, are cqlpg serve --origin HOST:PORT.

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
	case len(args) > 0 && args[0] == "diff":
		return migrateDiff(args[1:])
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
	return withTables(command, origin, shards, positional[0], "nothing was copied", func(ctx context.Context, src *gocql.Session,
		tg *target, dst *bulk.Cluster, ks *migrate.Keyspace, tables []*migrate.Table) int {
		dualWriters, err := dualWriters(ctx, tg.cluster)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: target: %v\n", command, err)
			return 1
		}
		if err := migrate.CheckCopyable(ks, tables, dualWriters); err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				fmt.Fprintf(os.Stderr, "%s: %s\n", command, line)
			}
			fmt.Fprintf(os.Stderr, "%s: nothing was copied\n", command)
			return 1
		}
		for _, t := range tables {
			p := newRateLine(os.Stderr)
			startDone := -1
			rows, err := migrate.Copy(ctx, src, dst, ks, t, migrate.CopyOptions{
				RangeOptions: migrate.RangeOptions{Parallel: *parallel, Splits: *splits, PageSize: *pageSize}, Rate: *rate, State: *resume,
				Target: tg.sess,
				Progress: func(cp migrate.CopyProgress) {
					if cp.Resumed {
						fmt.Fprintf(os.Stderr, "%s: %s: resuming with %d of %d token ranges (%d rows) copied; ranges not "+
							"recorded as done are copied again, which changes nothing\n", command, cp.Table, cp.RangesDone, cp.Ranges, cp.Rows)
					}
					if startDone < 0 {
						startDone = cp.RangesDone
					}
					p.set(cp.Rows-cp.StartRows, cp.Rows, fmt.Sprintf("%s: %d of %d token ranges%s", cp.Table, cp.RangesDone, cp.Ranges,
						timeLeft(p.elapsed(), cp.RangesDone-startDone, cp.Ranges-cp.RangesDone)))
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

// timeLeft estimates the time the ranges left take from the time the
// ranges done this run took: ", about 1m20s left", or "" until one is
// done or once all are.
func timeLeft(elapsed time.Duration, done, left int) string {
	if done <= 0 || left <= 0 {
		return ""
	}
	d := elapsed * time.Duration(left) / time.Duration(done)
	return fmt.Sprintf(", about %v left", d.Round(time.Second))
}

// gatewayHeard is how recent a gateway's heartbeat must be for it to
// count as running, the registry's default.
const gatewayHeard = 10 * time.Second

// dualWriters names the gateways of the target that run dual writes, as
// GATEWAY from ORIGIN, from every shard's registry.
func dualWriters(ctx context.Context, c *cluster.Cluster) ([]string, error) {
	var out []string
	for _, pool := range c.Control() {
		rows, err := pool.Query(ctx, pgschema.GatewaysDualWritingSQL, gatewayHeard.Seconds())
		if err != nil {
			return nil, fmt.Errorf("reading the gateways: %w", err)
		}
		for rows.Next() {
			var gw, origin string
			if err := rows.Scan(&gw, &origin); err != nil {
				rows.Close()
				return nil, err
			}
			if s := gw + " from " + origin; !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

// withTables reads the origin's keyspace or table spec names, checks
// that the target holds each table alike, and runs fn on them; a
// refusal ends with refused.
func withTables(command string, origin originFlags, shards *shardFlags, spec, refused string,
	fn func(ctx context.Context, src *gocql.Session, tg *target, dst *bulk.Cluster, ks *migrate.Keyspace, tables []*migrate.Table) int) int {
	ksName, tableName, err := parseTableName(spec)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", command, err)
		return 2
	}
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
			fmt.Fprintf(os.Stderr, "%s: the origin has no table %s\n", command, spec)
			return 1
		}
		tables = tables[i : i+1]
	}
	return withTarget(command, shards, func(ctx context.Context, tg *target) int {
		if err := migrate.CheckTables(ks, tables, tg.schema); err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				fmt.Fprintf(os.Stderr, "%s: %s\n", command, line)
			}
			fmt.Fprintf(os.Stderr, "%s: %s\n", command, refused)
			return 1
		}
		dst, err := bulk.Open(ctx, tg.cluster.Topology().Ring, tg.urls)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: target: %v\n", command, err)
			return 1
		}
		return fn(ctx, src, tg, dst, ks, tables)
	})
}

const diffUsage = `Usage: cqlpg migrate diff --origin HOST:PORT [--fix] [--fix-origin] [flags] KEYSPACE[.TABLE]

Compares the rows of a table, or of every table of a keyspace, on the
origin and on the cqlpg cluster, token range by token range: a digest of
each side's rows first, then, where the digests differ, the rows by
key. A row differs when a value or a write time does (TTLs, which count
down, do not compare). Each difference is printed on stdout as
"missing", "extra" or "differs", the table and the row's key; a summary
per table follows.

--fix writes the origin's cells of every missing or differing row to
the target at their write times, as migrate copy does: a cell the
target holds with a newer write time stays. Rows only the target holds
are reported and left alone.

--fix-origin writes the target's cells that are newer than the
origin's, of every extra or differing row, to the origin at their write
times and with the TTLs they have left: the writes the origin missed
while dual writes ran (cqlpg serve logs each), so that it can be gone
back to. Collections, user types and rows of keys alone, whose write
times CQL does not give, are reported and not written back.

Exit status: 0 when both sides hold the same rows, 3 when differences
were found (fixed or not), 1 on an error, 2 on bad usage.

Flags:
`

func migrateDiff(args []string) int {
	const command = "cqlpg migrate diff"
	fs := flag.NewFlagSet("migrate diff", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), diffUsage); fs.PrintDefaults() }
	origin := addOriginFlags(fs)
	parallel := fs.Int("parallel", 4, "token `ranges` compared at once")
	splits := fs.Int("splits", 256, "token `ranges` the ring is cut into; more bound the rows held where digests differ")
	pageSize := fs.Int("page-size", 1000, "`rows` per page read from either side")
	fixFlag := fs.Bool("fix", false, "write the origin's cells of missing and differing rows to the target")
	fixOrigin := fs.Bool("fix-origin", false, "write the target's newer cells of extra and differing rows to the origin")
	shards := addShardFlags(fs)
	positional, err := parseInterleaved(fs, args)
	if err != nil || len(positional) != 1 || *origin.addr == "" || *parallel < 1 || *splits < 1 || *pageSize < 1 {
		fs.Usage()
		return 2
	}
	return withTables(command, origin, shards, positional[0], "nothing was compared", func(ctx context.Context, src *gocql.Session,
		tg *target, dst *bulk.Cluster, ks *migrate.Keyspace, tables []*migrate.Table) int {
		var mu sync.Mutex
		status := 0
		for _, t := range tables {
			p := newRateLine(os.Stderr)
			res, err := migrate.Diff(ctx, src, tg.sess, dst, ks, t, migrate.DiffOptions{
				RangeOptions: migrate.RangeOptions{Parallel: *parallel, Splits: *splits, PageSize: *pageSize}, Fix: *fixFlag,
				FixOrigin: *fixOrigin,
				Found: func(d migrate.Difference) {
					mu.Lock()
					fmt.Printf("%-7s %s %s\n", d.Kind, d.Table, d.Key)
					mu.Unlock()
				},
				Progress: func(dp migrate.DiffProgress) {
					p.set(dp.Rows, dp.Rows, fmt.Sprintf("%s: %d of %d token ranges, %d differences%s", dp.Table, dp.RangesDone, dp.Ranges,
						dp.Differences, timeLeft(p.elapsed(), dp.RangesDone, dp.Ranges-dp.RangesDone)))
				},
			})
			p.stop()
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", command, err)
				return 1
			}
			fmt.Printf("%s.%s: %d rows compared, %d missing, %d extra, %d differ", ks.Name, t.Name, res.Rows, res.Missing, res.Extra, res.Differing)
			if *fixFlag {
				fmt.Printf("; %d fixed", res.Fixed)
			}
			if *fixOrigin {
				fmt.Printf("; %d written back to the origin", res.FixedOrigin)
			}
			fmt.Println()
			if res.Missing+res.Extra+res.Differing > 0 {
				status = 3
			}
		}
		return status
	})
}
