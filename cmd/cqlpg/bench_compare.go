package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// compareConfig is what one bench compare run measures.
type compareConfig struct {
	Workers      int           `json:"workers"`
	Conns        int           `json:"shard_conns"`
	Duration     time.Duration `json:"-"`
	DurationText string        `json:"duration"`
	Reps         int           `json:"reps"`
	Partitions   int           `json:"partitions"`
	Durable      bool          `json:"durable"`
	Workloads    []string      `json:"workloads"`
	Arms         []string      `json:"arms"`
	RateWorkload string        `json:"rate_workload"`
	// RatePeak, when set, stands for D1's measured peak in the fixed-rate
	// runs, so that runs on different data run at the same rates.
	RatePeak float64       `json:"rate_peak,omitempty"`
	Command  string        `json:"command"`
	Coalesce time.Duration `json:"gocql_write_coalesce_ns"`
	// GatewayProcess runs the G and N gateways as child processes, so
	// that their CPU is measured apart from the load generator's.
	GatewayProcess bool `json:"gateway_process"`
	// GatewayProcs, when set, is the gateway processes' GOMAXPROCS.
	GatewayProcs int `json:"gateway_gomaxprocs,omitempty"`
}

func benchCompare(args []string) int {
	fs := flag.NewFlagSet("bench compare", flag.ContinueOnError)
	var cfg compareConfig
	fs.IntVar(&cfg.Workers, "workers", 16, "concurrent clients per arm in the throughput runs")
	fs.IntVar(&cfg.Conns, "conns", 4, "connections to the shard, of the gateway and of each direct arm")
	fs.DurationVar(&cfg.Duration, "duration", 3*time.Second, "length of each measured run")
	fs.IntVar(&cfg.Reps, "reps", 3, "repetitions of each arm, interleaved; medians are reported")
	fs.IntVar(&cfg.Partitions, "partitions", 5000, "partitions of 20 rows the runs write and read")
	fs.BoolVar(&cfg.Durable, "durable", false, "keep synchronous_commit on: every commit waits for its WAL flush")
	fs.DurationVar(&cfg.Coalesce, "gocql-coalesce", -1, "gocql's WriteCoalesceWaitTime for the gateway arms; negative keeps the driver's default")
	fs.BoolVar(&cfg.GatewayProcess, "gateway-process", false, "run the G and N gateways as child processes and report their CPU apart")
	fs.IntVar(&cfg.GatewayProcs, "gateway-procs", 0, "GOMAXPROCS of the gateway processes (with --gateway-process); 0 keeps Go's default")
	workloads := fs.String("workloads", strings.Join(compareWorkloads, ","), "comma-separated workloads to run; insert-rf3, the point INSERT at QUORUM on three shards of its own, is run only when named")
	arms := fs.String("arms", "G,D1,D2,N", "comma-separated arms to run, for profiling one alone; ratios need G, D1 and D2")
	fs.Float64Var(&cfg.RatePeak, "rate-peak", 0, "ops/s the fixed-rate runs take as D1's peak (25/50/75% of it); 0 uses D1's measured peak")
	fs.StringVar(&cfg.RateWorkload, "rate-workload", "select", "workload of the fixed-rate latency runs; empty skips them")
	jsonOut := fs.String("json", "", "also write the results to this `file` as JSON")
	svgOut := fs.String("svg", "", "also draw throughput and latency per arm in this SVG `file`")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the measured runs (all arms, and the gateway unless it runs as a process of its own) to this `file`")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg.DurationText = cfg.Duration.String()
	cfg.Command = commandLine("cqlpg bench compare", args)
	for _, wl := range strings.Split(*workloads, ",") {
		if !slices.Contains(compareWorkloads, wl) && !slices.Contains(quorumWorkloads, wl) {
			fmt.Fprintf(os.Stderr, "cqlpg bench compare: unknown workload %q (have %s)\n", wl,
				strings.Join(slices.Concat(compareWorkloads, quorumWorkloads), ", "))
			return 2
		}
		cfg.Workloads = append(cfg.Workloads, wl)
	}
	for _, a := range strings.Split(*arms, ",") {
		if !slices.Contains(compareArms, a) {
			fmt.Fprintf(os.Stderr, "cqlpg bench compare: unknown arm %q (have %s)\n", a, strings.Join(compareArms, ", "))
			return 2
		}
		cfg.Arms = append(cfg.Arms, a)
	}
	if cfg.RateWorkload != "" && !slices.Contains(cfg.Workloads, cfg.RateWorkload) {
		fmt.Fprintf(os.Stderr, "cqlpg bench compare: rate workload %q is not among --workloads\n", cfg.RateWorkload)
		return 2
	}
	ctx := context.Background()
	log := benchLog()
	// One shard for the single-shard workloads and quorumShards more for
	// the replicated ones, each set started only when it has work.
	shards := 0
	if slices.ContainsFunc(cfg.Workloads, func(wl string) bool { return !slices.Contains(quorumWorkloads, wl) }) {
		shards++
	}
	if slices.ContainsFunc(cfg.Workloads, func(wl string) bool { return slices.Contains(quorumWorkloads, wl) }) {
		shards += quorumShards
	}
	// Headline runs commit without waiting for the WAL flush, as bench
	// storage does; --durable waits, as a deployment would.
	clusters, stop, err := benchClusters(ctx, log, shards, cfg.Durable)
	if err != nil {
		log.Error("cannot start a PostgreSQL cluster", "err", err)
		return 1
	}
	defer stop()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			log.Error("cannot write the CPU profile", "err", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Error("cannot start the CPU profile", "err", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	report, err := runCompare(ctx, log, clusters, cfg)
	if err != nil {
		log.Error("benchmark failed", "err", err)
		return 1
	}
	report.print(os.Stdout)
	if !writeResults(log, *jsonOut, report) {
		return 1
	}
	if *svgOut != "" {
		if err := os.WriteFile(*svgOut, report.svg(), 0o644); err != nil {
			log.Error("cannot write the chart", "err", err)
			return 1
		}
	}
	return 0
}

func runCompare(ctx context.Context, log *slog.Logger, clusters []*localpg.Cluster, cfg compareConfig) (*compareReport, error) {
	rep := &compareReport{Config: cfg}
	var single, replicated []string
	for _, wl := range cfg.Workloads {
		if slices.Contains(quorumWorkloads, wl) {
			replicated = append(replicated, wl)
		} else {
			single = append(single, wl)
		}
	}
	if len(single) > 0 {
		if err := rep.runPhase(ctx, log, clusters[:1], single); err != nil {
			return nil, err
		}
		clusters = clusters[1:]
	}
	if len(replicated) > 0 {
		if err := rep.runPhase(ctx, log, clusters[:quorumShards], replicated); err != nil {
			return nil, err
		}
	}
	rep.ratios()
	return rep, nil
}

// runPhase measures workloads on a keyspace replicated to every one of
// shards, with gateways and direct arms of their own: the replicated
// workloads run on shards apart from the single-shard ones, so that
// neither phase's ring or data is the other's.
func (rep *compareReport) runPhase(ctx context.Context, log *slog.Logger, shards []*localpg.Cluster, workloads []string) error {
	cfg := rep.Config
	var urls []string
	var pgs []func() []int
	for _, c := range shards {
		urls = append(urls, c.URL())
		pgs = append(pgs, postgresPIDs(c.Dir()))
	}
	pg := func() []int {
		var pids []int
		for _, f := range pgs {
			pids = append(pids, f()...)
		}
		return pids
	}
	var closers []func()
	defer func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}()
	gw, err := startBenchServer(ctx, urls, cfg.Conns, false, cfg.GatewayProcess, cfg.GatewayProcs)
	if err != nil {
		return err
	}
	closers = append(closers, gw.stop)
	ks := keyspace{partitions: uint32(cfg.Partitions)}
	g, err := gocqlArm("G", gw, ks, cfg.Coalesce)
	if err != nil {
		return err
	}
	closers = append(closers, g.close)
	if err := createBenchTable(g.exec, len(shards)); err != nil {
		return err
	}
	// The null gateway opens after the table exists, so it plans against
	// the same schema; its reads find nothing and its writes go nowhere.
	null, err := startBenchServer(ctx, urls, cfg.Conns, true, cfg.GatewayProcess, cfg.GatewayProcs)
	if err != nil {
		return err
	}
	closers = append(closers, null.stop)
	n, err := gocqlArm("N", null, ks, cfg.Coalesce)
	if err != nil {
		return err
	}
	closers = append(closers, n.close)

	// The direct arms connect as the gateway does, so the trigger for
	// writes made in SQL skips them too; each keeps as many connections
	// to every shard as the gateway does.
	var pools []*pgxpool.Pool
	var shardPools []*sharding.Pool
	for _, url := range urls {
		pool, err := gatewayPool(ctx, url, cfg.Conns)
		if err != nil {
			return err
		}
		closers = append(closers, pool.Close)
		pools = append(pools, pool)
		sp, err := shardPool(url, cfg.Conns)
		if err != nil {
			return err
		}
		closers = append(closers, sp.Close)
		shardPools = append(shardPools, sp)
	}
	plans, err := loadDirectPlans(ctx, pools[0])
	if err != nil {
		return err
	}
	d1, d2 := d1Arm(pools, plans, ks), d2Arm(shardPools, plans, ks)
	// The replicated workloads only write, so only a single shard's
	// reads need rows to find.
	if len(shards) == 1 {
		if err := preload(ctx, log, shardPools[0], plans, cfg.Partitions); err != nil {
			return fmt.Errorf("loading rows: %w", err)
		}
		// Measure the steady state, not the load's aftermath: statistics
		// current, dirty pages written, dead tuples gone.
		if _, err := pools[0].Exec(ctx, "VACUUM ANALYZE"); err != nil {
			return fmt.Errorf("vacuuming after the load: %w", err)
		}
		if _, err := pools[0].Exec(ctx, "CHECKPOINT"); err != nil {
			return fmt.Errorf("checkpoint after the load: %w", err)
		}
	}
	arms := cfg.chosen(g, d1, d2, n)

	for _, wl := range workloads {
		samples := make([][]throughputSample, len(arms))
		for r := range cfg.Reps {
			for i, arm := range arms {
				s, err := closedLoop(ctx, arm, wl, cfg.Workers, cfg.Duration, pg, uint64(r*len(arms)+i+1))
				if err != nil {
					return fmt.Errorf("%s %s: %w", arm.name, wl, err)
				}
				samples[i] = append(samples[i], s)
				log.Info("run", "workload", wl, "rep", r+1, "arm", arm.name, "ops/s", int(s.opsSec))
			}
		}
		for i, arm := range arms {
			rep.Throughput = append(rep.Throughput, summarize(wl, arm.name, cfg.Workers, samples[i]))
		}
	}
	if cfg.RateWorkload != "" && slices.Contains(workloads, cfg.RateWorkload) {
		if err := rep.rateRuns(ctx, log, cfg, cfg.chosen(g, d1, d2, n)); err != nil {
			return err
		}
	}
	return nil
}

// compareArms names the arms in the order they run.
var compareArms = []string{"G", "D1", "D2", "N"}

// chosen returns those of arms that --arms names.
func (cfg *compareConfig) chosen(arms ...*compareArm) []*compareArm {
	return slices.DeleteFunc(arms, func(a *compareArm) bool { return !slices.Contains(cfg.Arms, a.name) })
}

// preload writes every row of every partition through the shard pool, so
// that reads find what they ask for.
func preload(ctx context.Context, log *slog.Logger, pool *sharding.Pool, plans *directPlans, partitions int) error {
	const window = 512
	ops := make([]*sharding.Op, 0, window)
	start, step := time.Now(), max(1, partitions/10)
	for k := range int32(partitions) {
		if k > 0 && int(k)%step == 0 {
			rows := int(k) * rowsPerPartition
			log.Info("loading", "rows", rows, "of", partitions*rowsPerPartition,
				"rows/s", int(float64(rows)/time.Since(start).Seconds()))
		}
		for c := range int32(rowsPerPartition) {
			args, formats := plans.insert.args(rowValues(k, c), k, c)
			op := sharding.NewOp(plans.insert.stmt, args, formats, nil)
			op.Order = 2 + uint64(uint32(k))<<32 | uint64(uint32(c)) // shared transactions, as D2
			pool.Submit(op)
			ops = append(ops, op)
			if len(ops) == window {
				if err := waitAll(ctx, ops); err != nil {
					return err
				}
				ops = ops[:0]
			}
		}
	}
	return waitAll(ctx, ops)
}

// throughputSample is one closed-loop run of one arm.
type throughputSample struct {
	opsSec      float64
	procCPU     float64 // this process's CPU seconds
	gatewayCPU  float64 // the gateway process's, when it runs apart
	postgresCPU float64
	ops         int64
}

// closedLoop runs workload wl from workers goroutines, each sending its
// next operation when the last one is answered, for d.
func closedLoop(ctx context.Context, arm *compareArm, wl string, workers int, d time.Duration, pg func() []int, seed uint64) (throughputSample, error) {
	cpu0, pg0, gw0 := procCPU(os.Getpid()), pidsCPU(pg()), gatewayCPU(arm)
	start := time.Now()
	ops, err := loopWorkers(workers, start.Add(d), func(w int) (func() error, func(), error) {
		r := rng(seed*0x9E3779B97F4A7C15 + uint64(w+1)*0xBF58476D1CE4E5B9)
		return func() error { return arm.do(ctx, wl, &r) }, nil, nil
	})
	elapsed := time.Since(start).Seconds()
	return throughputSample{opsSec: float64(ops) / elapsed, ops: ops,
		procCPU: procCPU(os.Getpid()) - cpu0, gatewayCPU: gatewayCPU(arm) - gw0, postgresCPU: pidsCPU(pg()) - pg0}, err
}

// gatewayCPU returns the CPU seconds of the arm's gateway process so far,
// or 0 when the arm has none of its own.
func gatewayCPU(arm *compareArm) float64 {
	if arm.pid == 0 {
		return 0
	}
	return procCPU(arm.pid)
}

// latencySample is one fixed-rate run of one arm.
type latencySample struct {
	achieved       float64
	p50, p99, p999 time.Duration
	errors         int64
}

// fixedRate sends workload wl at rate operations per second for d. Each
// operation has an intended send time on a fixed schedule, and its latency
// counts from that time, not from when a client was free to send it: a
// stall delays every operation scheduled during it and shows in the
// percentiles instead of silently lowering the rate (no coordinated
// omission).
func fixedRate(ctx context.Context, arm *compareArm, wl string, rate float64, clients int, d time.Duration) latencySample {
	total := int(rate * d.Seconds())
	interval := time.Duration(float64(time.Second) / rate)
	tickets := make(chan time.Time, total+1)
	lat := make([][]time.Duration, clients)
	var errs atomic.Int64
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			r := rng(uint64(w+1) * 0xD1B54A32D192ED03)
			for due := range tickets {
				if err := arm.do(ctx, wl, &r); err != nil {
					errs.Add(1)
					continue
				}
				lat[w] = append(lat[w], time.Since(due))
			}
		})
	}
	start := time.Now()
	for i := range total {
		due := start.Add(time.Duration(i) * interval)
		if wait := time.Until(due); wait > 0 {
			time.Sleep(wait)
		}
		tickets <- due
	}
	close(tickets)
	wg.Wait()
	elapsed := time.Since(start).Seconds()
	all := slices.Concat(lat...)
	slices.Sort(all)
	pct := func(q float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(q*float64(len(all))))]
	}
	return latencySample{achieved: float64(len(all)) / elapsed, p50: pct(0.50), p99: pct(0.99), p999: pct(0.999),
		errors: errs.Load()}
}

// loadFractions are the fractions of D1's peak throughput at which the
// fixed-rate runs measure latency.
var loadFractions = []float64{0.25, 0.50, 0.75}

// rateRuns measures latency at fixed rates, fractions of D1's closed-loop
// peak on the rate workload, interleaving the arms at each rate.
func (rep *compareReport) rateRuns(ctx context.Context, log *slog.Logger, cfg compareConfig, arms []*compareArm) error {
	peak := cfg.RatePeak
	if peak == 0 {
		d1 := rep.find(cfg.RateWorkload, "D1")
		if d1 == nil {
			return fmt.Errorf("rate workload %q was not run by D1, and --rate-peak is not given", cfg.RateWorkload)
		}
		peak = d1.OpsSec
	}
	// Enough clients that a slow answer never holds back the schedule.
	clients := 4 * cfg.Workers
	for _, f := range loadFractions {
		rate := max(1, f*peak)
		for _, arm := range arms {
			s := fixedRate(ctx, arm, cfg.RateWorkload, rate, clients, cfg.Duration)
			if s.errors > 0 {
				return fmt.Errorf("%s at %.0f ops/s: %d operations failed", arm.name, rate, s.errors)
			}
			log.Info("fixed rate", "workload", cfg.RateWorkload, "arm", arm.name, "rate", int(rate),
				"p50", s.p50, "p99", s.p99, "p99.9", s.p999)
			rep.Latency = append(rep.Latency, latencyResult{Workload: cfg.RateWorkload, Arm: arm.name, Load: f,
				TargetRate: rate, AchievedRate: s.achieved,
				P50Micros: micros(s.p50), P99Micros: micros(s.p99), P999Micros: micros(s.p999)})
		}
	}
	for _, f := range loadFractions {
		g, d := rep.latency("G", f), rep.latency("D1", f)
		if g != nil && d != nil {
			rep.AddedP99 = append(rep.AddedP99, addedP99{Load: f, Micros: g.P99Micros - d.P99Micros})
		}
	}
	return nil
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
