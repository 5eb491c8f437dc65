package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/sharding/localpg"
	"github.com/cqlpg/cqlpg/sharding/shellquote"
	"github.com/cqlpg/cqlpg/translate"
)

const benchUsage = `cqlpg bench measures cqlpg against PostgreSQL used directly.

Usage:
  cqlpg bench storage [flags]   the cost of cqlpg's table layout: pgx running the
                                SQL cqlpg generates against pgx on a plain table
  cqlpg bench compare [flags]   gocql through the gateway against pgx running the
                                same SQL directly, one statement per round trip and
                                pipelined, and the gateway on a null backend
  cqlpg bench paging [flags]    gocql paging through a large table and a large
                                partition, with the gateway's resident memory
`

func bench(args []string) int {
	if len(args) < 1 {
		fmt.Fprint(os.Stderr, benchUsage)
		return 2
	}
	switch args[0] {
	case "storage":
		return benchStorage(args[1:])
	case "compare":
		return benchCompare(args[1:])
	case "paging":
		return benchPaging(args[1:])
	case "gateway":
		// Not listed in the usage: bench compare starts it as a child.
		return benchGateway(args[1:])
	}
	fmt.Fprintf(os.Stderr, "cqlpg bench: unknown workload %q\n\n%s", args[0], benchUsage)
	return 2
}

// storageArm is one side of the storage benchmark: how to write and read
// one row (k, c) with values v and w.
type storageArm struct {
	name   string
	write  func(ctx context.Context, conn *pgxpool.Conn, k, c int32) error
	read   func(ctx context.Context, conn *pgxpool.Conn, k, c int32) error
	tables []string // for the size per row
}

// storageResult is one arm's figures, medians over the repetitions.
type storageResult struct {
	Arm         string  `json:"arm"`
	WriteOpsSec float64 `json:"write_ops_per_sec"`
	ReadOpsSec  float64 `json:"read_ops_per_sec"`
	WriteMicros float64 `json:"write_us_per_op"`
	ReadMicros  float64 `json:"read_us_per_op"`
	BytesPerRow float64 `json:"bytes_per_row"`
	// ShardWriteMicros and ShardReadMicros are the shard's CPU time per
	// operation, all its processes together: the work the layout costs
	// Postgres, which the machine's noise moves far less than the rates.
	// Zero when the shard is not a local cluster the benchmark started.
	ShardWriteMicros float64 `json:"shard_cpu_us_per_write,omitempty"`
	ShardReadMicros  float64 `json:"shard_cpu_us_per_read,omitempty"`
}

func benchStorage(args []string) int {
	fs := flag.NewFlagSet("bench storage", flag.ContinueOnError)
	shardURL := fs.String("shard", "", "PostgreSQL `URL` to measure on; without it a temporary local cluster is started")
	workers := fs.Int("workers", 16, "concurrent clients per arm")
	duration := fs.Duration("duration", 5*time.Second, "length of each measured run")
	reps := fs.Int("reps", 3, "repetitions of each arm, interleaved; medians are reported")
	rows := fs.Int("rows", 100000, "distinct rows the runs write and read")
	jsonOut := fs.String("json", "", "also write the results to this `file` as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx := context.Background()
	log := benchLog()
	url := *shardURL
	var shardCPU func() float64 // nil for a shard the benchmark did not start
	if url == "" {
		clusters, stop, err := benchClusters(ctx, log, 1, false)
		if err != nil {
			log.Error("cannot start a PostgreSQL cluster", "err", err)
			return 1
		}
		defer stop()
		url = clusters[0].URL()
		pids := postgresPIDs(clusters[0].Dir())
		shardCPU = func() float64 { return pidsCPU(pids()) }
	}
	results, err := runStorageBench(ctx, log, url, *workers, *duration, *reps, *rows, shardCPU)
	if err != nil {
		log.Error("benchmark failed", "err", err)
		return 1
	}
	fmt.Printf("%-8s %12s %10s %12s %10s %12s %16s %16s\n", "arm", "writes/s", "µs/write", "reads/s", "µs/read", "bytes/row",
		"shard µs/write", "shard µs/read")
	for _, r := range results {
		fmt.Printf("%-8s %12.0f %10.1f %12.0f %10.1f %12.0f %16.1f %16.1f\n", r.Arm, r.WriteOpsSec, r.WriteMicros,
			r.ReadOpsSec, r.ReadMicros, r.BytesPerRow, r.ShardWriteMicros, r.ShardReadMicros)
	}
	if len(results) == 2 {
		fmt.Printf("cqlpg/plain: writes %.2f, reads %.2f, size %.2f\n", results[0].WriteOpsSec/results[1].WriteOpsSec,
			results[0].ReadOpsSec/results[1].ReadOpsSec, results[0].BytesPerRow/results[1].BytesPerRow)
		if shardCPU != nil {
			fmt.Printf("shard CPU per operation, cqlpg/plain: writes %.2f, reads %.2f\n",
				results[0].ShardWriteMicros/results[1].ShardWriteMicros, results[0].ShardReadMicros/results[1].ShardReadMicros)
		}
	}
	if !writeResults(log, *jsonOut, results) {
		return 1
	}
	return 0
}

func runStorageBench(ctx context.Context, log *slog.Logger, url string, workers int, d time.Duration, reps, rows int,
	shardCPU func() float64) ([]storageResult, error) {
	// A gateway creates the CQL table through its own DDL path.
	gw, err := startBenchServer(ctx, []string{url}, 0, false, false, 0)
	if err != nil {
		return nil, err
	}
	defer gw.stop()
	sess, err := gocqlSession(gw, -1)
	if err != nil {
		return nil, err
	}
	err = createBenchTable(func(stmt string) error { return sess.Query(stmt).Exec() }, 1)
	sess.Close()
	if err != nil {
		return nil, err
	}

	// The arms write as the gateway does, so the psql-write trigger skips
	// them.
	pool, err := gatewayPool(ctx, url, workers)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	cqlpgArm, err := cqlpgStorageArm(ctx, pool)
	if err != nil {
		return nil, err
	}
	plainArm, err := plainStorageArm(ctx, pool)
	if err != nil {
		return nil, err
	}
	arms := []*storageArm{cqlpgArm, plainArm}

	type sample struct{ writes, reads, writeCPU, readCPU []float64 }
	samples := make([]sample, len(arms))
	// measure runs op as runOps does, and returns its rate and the
	// shard's CPU µs per operation (0 without shardCPU).
	measure := func(op func(context.Context, *pgxpool.Conn, int32, int32) error) (float64, float64, error) {
		var before float64
		if shardCPU != nil {
			before = shardCPU()
		}
		rate, err := runOps(ctx, pool, workers, d, rows, op)
		if shardCPU == nil || err != nil || rate == 0 {
			return rate, 0, err
		}
		return rate, 1e6 * (shardCPU() - before) / (rate * d.Seconds()), nil
	}
	for rep := range reps {
		for i, arm := range arms {
			w, wcpu, err := measure(arm.write)
			if err != nil {
				return nil, fmt.Errorf("%s writes: %w", arm.name, err)
			}
			r, rcpu, err := measure(arm.read)
			if err != nil {
				return nil, fmt.Errorf("%s reads: %w", arm.name, err)
			}
			sm := &samples[i]
			sm.writes, sm.reads = append(sm.writes, w), append(sm.reads, r)
			sm.writeCPU, sm.readCPU = append(sm.writeCPU, wcpu), append(sm.readCPU, rcpu)
			log.Info("run", "rep", rep+1, "arm", arm.name, "writes/s", int(w), "reads/s", int(r),
				"shard µs/write", fmt.Sprintf("%.1f", wcpu), "shard µs/read", fmt.Sprintf("%.1f", rcpu))
		}
	}
	var out []storageResult
	for i, arm := range arms {
		var bytes int64
		for _, table := range arm.tables {
			// Sizes are of the tables rewritten compact, so that the dead
			// versions the runs' updates left do not count.
			if _, err := pool.Exec(ctx, "VACUUM FULL "+table); err != nil {
				return nil, err
			}
			var n int64
			if err := pool.QueryRow(ctx, "SELECT pg_total_relation_size($1::regclass)", table).Scan(&n); err != nil {
				return nil, err
			}
			bytes += n
		}
		var count int64
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+arm.tables[0]).Scan(&count); err != nil {
			return nil, err
		}
		w, r := median(samples[i].writes), median(samples[i].reads)
		out = append(out, storageResult{Arm: arm.name, WriteOpsSec: w, ReadOpsSec: r,
			WriteMicros: 1e6 * float64(workers) / w, ReadMicros: 1e6 * float64(workers) / r,
			BytesPerRow:      float64(bytes) / float64(max(count, 1)),
			ShardWriteMicros: median(samples[i].writeCPU), ShardReadMicros: median(samples[i].readCPU)})
	}
	return out, nil
}

// runOps runs op on random rows from workers goroutines for d and returns
// operations per second.
func runOps(ctx context.Context, pool *pgxpool.Pool, workers int, d time.Duration, rows int,
	op func(context.Context, *pgxpool.Conn, int32, int32) error) (float64, error) {
	ops, err := loopWorkers(workers, time.Now().Add(d), func(w int) (func() error, func(), error) {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			return nil, nil, err
		}
		seed := uint32(w*7919 + 1)
		return func() error {
			seed = seed*1664525 + 1013904223
			n := int32(seed % uint32(rows))
			return op(ctx, conn, n/10, n%10)
		}, conn.Release, nil
	})
	return float64(ops) / d.Seconds(), err
}

// loopWorkers runs workers goroutines, each repeating the operation that
// start gives it until deadline or until it fails, then calling the
// function start gave to end it; it returns the operations done and
// every error.
func loopWorkers(workers int, deadline time.Time, start func(w int) (op func() error, end func(), err error)) (int64, error) {
	var done atomic.Int64
	var mu sync.Mutex
	var errs error
	fail := func(err error) {
		mu.Lock()
		errs = errors.Join(errs, err)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			op, end, err := start(w)
			if err != nil {
				fail(err)
				return
			}
			if end != nil {
				defer end()
			}
			for time.Now().Before(deadline) {
				if err := op(); err != nil {
					fail(err)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return done.Load(), errs
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// cqlpgStorageArm runs the SQL cqlpg generates for
// INSERT INTO bench.kv (k, c, v, w) VALUES (?, ?, ?, ?) and a point SELECT,
// with the parameters the gateway would send.
func cqlpgStorageArm(ctx context.Context, pool *pgxpool.Pool) (*storageArm, error) {
	prepare, err := benchPlanner(ctx, pool)
	if err != nil {
		return nil, err
	}
	ins, err := prepare("INSERT INTO bench.kv (k, c, v, w) VALUES (?, ?, ?, ?)")
	if err != nil {
		return nil, err
	}
	sel, err := prepare("SELECT k, c, v, w FROM bench.kv WHERE k = ? AND c = ?")
	if err != nil {
		return nil, err
	}
	write, read := ins.(*translate.Write), sel.(*translate.Select)
	writeOIDs, readOIDs := storageOIDs(write.Params), storageOIDs(read.Params)
	t := write.Table
	return &storageArm{
		name: "cqlpg",
		write: func(ctx context.Context, conn *pgxpool.Conn, k, c int32) error {
			args := bindArgs(write.Params, rowValues(k, c), k, c, 1<<62)
			return execParams(ctx, conn.Conn().PgConn(), write.SQL, args, writeOIDs)
		},
		read: func(ctx context.Context, conn *pgxpool.Conn, k, c int32) error {
			args := bindArgs(read.Params, [][]byte{int4(k), int4(c)}, k, c, 1<<62)
			return execParams(ctx, conn.Conn().PgConn(), read.SQL, args, readOIDs)
		},
		tables: []string{t.Ident(), pgx.Identifier{t.PGSchema, t.DeletionsPGName()}.Sanitize()},
	}, nil
}

// bindArgs fills in a plan's parameters for the row (k, c) of bench.kv
// as the gateway's executor does: bound holds the CQL values bound to the
// markers, which for bench.kv's int and text columns are also their
// Postgres binary forms, and limit is the row limit of a read. Expiries,
// empty flags and page positions stay null, as they are for these
// statements.
func bindArgs(params []translate.Param, bound [][]byte, k, c int32, limit uint64) [][]byte {
	now := time.Now()
	args := make([][]byte, len(params))
	for i, p := range params {
		switch p.Kind {
		case translate.ParamNow:
			args[i] = int4(int32(now.Unix()))
		case translate.ParamClock:
			args[i] = binary.BigEndian.AppendUint64(nil, uint64(now.UnixMicro()))
		case translate.ParamToken:
			args[i] = binary.BigEndian.AppendUint64(nil, uint64(sharding.KeyToken([][]byte{int4(k)})))
		case translate.ParamKey:
			args[i] = [][]byte{int4(k), int4(c)}[p.Key]
		case translate.ParamValue:
			if m := p.Value.Marker; m >= 0 && m < len(bound) {
				args[i] = bound[m]
			}
		case translate.ParamWritetime:
			args[i] = binary.BigEndian.AppendUint64(nil, uint64(now.UnixMicro()))
		case translate.ParamLimit:
			args[i] = binary.BigEndian.AppendUint64(nil, limit)
		}
	}
	return args
}

// rowValues are the values the benchmarks write to row (k, c) of bench.kv,
// bound to INSERT's markers k, c, v and w.
func rowValues(k, c int32) [][]byte { return [][]byte{int4(k), int4(c), int4(k + c), []byte("value")} }

func int4(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }

// storageOIDs declares the types of a plan's parameters for bench.kv,
// whose columns are int but for w, text.
func storageOIDs(params []translate.Param) []uint32 {
	oids := make([]uint32, len(params))
	for i, p := range params {
		switch p.Kind {
		case translate.ParamToken, translate.ParamWritetime, translate.ParamLimit, translate.ParamClock:
			oids[i] = 20
		case translate.ParamEmptyFlag:
			oids[i] = 16
		case translate.ParamValue:
			oids[i] = 23
			if p.Column != nil && p.Column.Name == "w" {
				oids[i] = 25
			}
		default:
			oids[i] = 23
		}
	}
	return oids
}

// execParams runs a statement with binary parameters, discarding the rows.
// Each connection prepares it once, as the gateway does on its shards.
func execParams(ctx context.Context, conn *pgconn.PgConn, sql string, args [][]byte, oids []uint32) error {
	name := fmt.Sprintf("bench_%x", sha256.Sum256([]byte(sql)))[:22]
	if prepared, _ := conn.CustomData()[name].(bool); !prepared {
		if _, err := conn.Prepare(ctx, name, sql, oids); err != nil {
			return err
		}
		conn.CustomData()[name] = true
	}
	formats := make([]int16, len(args))
	for i := range formats {
		formats[i] = 1
	}
	_, err := conn.ExecPrepared(ctx, name, args, formats, []int16{1}).Close()
	return err
}

// plainStorageArm writes and reads the same rows in a plain Postgres table
// with the same columns and key, and nothing else.
func plainStorageArm(ctx context.Context, pool *pgxpool.Pool) (*storageArm, error) {
	for _, stmt := range []string{
		"DROP SCHEMA IF EXISTS bench_plain CASCADE",
		"CREATE SCHEMA bench_plain",
		`CREATE TABLE bench_plain.kv (k integer, c integer, v integer, w text COLLATE "C", PRIMARY KEY (k, c))`,
	} {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			return nil, err
		}
	}
	const upsert = "INSERT INTO bench_plain.kv (k, c, v, w) VALUES ($1, $2, $3, $4) " +
		"ON CONFLICT (k, c) DO UPDATE SET v = excluded.v, w = excluded.w"
	const point = "SELECT k, c, v, w FROM bench_plain.kv WHERE k = $1 AND c = $2"
	return &storageArm{
		name: "plain",
		write: func(ctx context.Context, conn *pgxpool.Conn, k, c int32) error {
			return execParams(ctx, conn.Conn().PgConn(), upsert, rowValues(k, c), []uint32{pgschema.OIDInt4, pgschema.OIDInt4, pgschema.OIDInt4, pgschema.OIDText})
		},
		read: func(ctx context.Context, conn *pgxpool.Conn, k, c int32) error {
			return execParams(ctx, conn.Conn().PgConn(), point, [][]byte{int4(k), int4(c)}, []uint32{pgschema.OIDInt4, pgschema.OIDInt4})
		},
		tables: []string{"bench_plain.kv"},
	}, nil
}

// benchLog logs a benchmark's progress to standard error.
func benchLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// quietLog discards what the benchmarks' gateways and pools log.
func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// benchClusters starts n throwaway PostgreSQL clusters. Unless durable,
// commits do not wait for their WAL flush.
func benchClusters(ctx context.Context, log *slog.Logger, n int, durable bool) ([]*localpg.Cluster, func(), error) {
	commit := "off"
	if durable {
		commit = "on"
	}
	return localpg.TempClusters(ctx, n, localpg.Options{Settings: map[string]string{"synchronous_commit": commit}, Log: log})
}

// createBenchTable creates the keyspace bench, replicated rf times, and
// its table kv, running each statement with exec.
func createBenchTable(exec func(stmt string) error, rf int) error {
	for _, stmt := range []string{
		"DROP KEYSPACE IF EXISTS bench",
		fmt.Sprintf("CREATE KEYSPACE bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}", rf),
		"CREATE TABLE bench.kv (k int, c int, v int, w text, PRIMARY KEY (k, c))",
	} {
		if err := exec(stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return nil
}

// gatewayPool connects to the shard at url as the gateway does, so that
// the trigger for writes made in SQL skips the benchmark's own writes;
// conns caps the pool, 0 keeps pgxpool's default.
func gatewayPool(ctx context.Context, url string, conns int) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(pgschema.GatewayConnString(url))
	if err != nil {
		return nil, err
	}
	if conns > 0 {
		pc.MaxConns = int32(conns)
	}
	return pgxpool.NewWithConfig(ctx, pc)
}

// shardPool is a gateway's shard pool of conns connections to url.
func shardPool(url string, conns int) (*sharding.Pool, error) {
	return sharding.NewPool(sharding.PoolConfig{Name: "bench", URL: pgschema.GatewayConnString(url), Conns: conns, Log: quietLog()})
}

// waitAll waits for every op and joins their errors.
func waitAll(ctx context.Context, ops []*sharding.Op) error {
	var errs []error
	for _, op := range ops {
		errs = append(errs, op.Wait(ctx))
	}
	return errors.Join(errs...)
}

// benchPlanner plans CQL in the keyspace bench against the catalog as it
// is now.
func benchPlanner(ctx context.Context, pool *pgxpool.Pool) (func(cql string) (translate.Plan, error), error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	schema, err := pgschema.Load(ctx, conn)
	conn.Release()
	if err != nil {
		return nil, err
	}
	return func(cql string) (translate.Plan, error) {
		parsed, err := translate.Parse(cql)
		if err != nil {
			return nil, err
		}
		return translate.Prepare(parsed, "bench", schema)
	}, nil
}

// writeResults writes v as indented JSON to path, if one was given, and
// reports whether that went well.
func writeResults(log *slog.Logger, path string, v any) bool {
	if path == "" {
		return true
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err == nil {
		err = os.WriteFile(path, append(b, '\n'), 0o644)
	}
	if err != nil {
		log.Error("cannot write the results", "err", err)
		return false
	}
	return true
}

// commandLine is the command a benchmark ran, as a shell would take it:
// each argument quoted where a shell needs it (sharding/shellquote).
func commandLine(command string, args []string) string {
	for _, a := range args {
		command += " " + shellquote.Quote(a)
	}
	return command
}
