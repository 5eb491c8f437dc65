package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/sharding"
)

// pagingConfig is what one bench paging run measures.
type pagingConfig struct {
	Rows          int    `json:"rows"`
	PartitionRows int    `json:"partition_rows"`
	LargeRows     int    `json:"large_partition_rows"`
	PageSize      int    `json:"page_size"`
	Conns         int    `json:"shard_conns"`
	Command       string `json:"command"`
}

// pagingResult is one paged read through the gateway: RSS is the gateway
// process's resident set, sampled every rssInterval while the read ran.
type pagingResult struct {
	Read       string  `json:"read"`
	Rows       int64   `json:"rows_read"`
	Distinct   int64   `json:"distinct_rows"`
	Duplicates int64   `json:"duplicate_rows"`
	Expected   int64   `json:"expected_rows"`
	Pages      int64   `json:"pages"`
	Seconds    float64 `json:"elapsed_s"`
	RowsSec    float64 `json:"rows_per_sec"`
	RSSStartMB float64 `json:"rss_start_mb"`
	RSSMaxMB   float64 `json:"rss_max_mb"`
	RSSEndMB   float64 `json:"rss_end_mb"`
}

// pagingReport is what bench paging prints and writes as JSON.
type pagingReport struct {
	Config      pagingConfig   `json:"config"`
	LoadSeconds float64        `json:"load_s"`
	Reads       []pagingResult `json:"reads"`
}

const rssInterval = 100 * time.Millisecond

// The reads of bench paging: the whole table, which the gateway answers
// with a token-range scan, and its one large partition.
const (
	cqlScan      = "SELECT k, c, v, w FROM bench.kv"
	cqlPartition = "SELECT k, c, v, w FROM bench.kv WHERE k = 0"
)

func benchPaging(args []string) int {
	fs := flag.NewFlagSet("bench paging", flag.ContinueOnError)
	var cfg pagingConfig
	fs.IntVar(&cfg.Rows, "rows", 1_000_000, "rows to load and read back")
	fs.IntVar(&cfg.PartitionRows, "partition-rows", 1000, "rows of each partition but the large one")
	fs.IntVar(&cfg.LargeRows, "large-partition", 0, "rows of the large partition, k = 0; 0 makes it a tenth of --rows")
	fs.IntVar(&cfg.PageSize, "page-size", pageSize, "rows per page gocql asks for")
	fs.IntVar(&cfg.Conns, "conns", 4, "connections to the shard, of the gateway and of the loader")
	jsonOut := fs.String("json", "", "also write the results to this `file` as JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if cfg.LargeRows == 0 {
		cfg.LargeRows = cfg.Rows / 10
	}
	if cfg.Rows < 1 || cfg.PartitionRows < 1 || cfg.LargeRows < 1 || cfg.LargeRows > cfg.Rows || cfg.PageSize < 1 {
		fmt.Fprintln(os.Stderr, "cqlpg bench paging: need 0 < --large-partition <= --rows and positive sizes")
		return 2
	}
	cfg.Command = commandLine("cqlpg bench paging", args)
	ctx := context.Background()
	log := benchLog()
	clusters, stop, err := benchClusters(ctx, log, 1, false)
	if err != nil {
		log.Error("cannot start a PostgreSQL cluster", "err", err)
		return 1
	}
	defer stop()
	rep, err := runPaging(ctx, log, clusters[0].URL(), cfg)
	if err != nil {
		log.Error("benchmark failed", "err", err)
		return 1
	}
	rep.print(os.Stdout)
	if !writeResults(log, *jsonOut, rep) {
		return 1
	}
	return 0
}

// row places the i-th loaded row: the first LargeRows form
// partition 0, the rest fill partitions 1, 2, ... of PartitionRows each.
func (cfg pagingConfig) row(i int) (k, c int32) {
	if i < cfg.LargeRows {
		return 0, int32(i)
	}
	i -= cfg.LargeRows
	return int32(1 + i/cfg.PartitionRows), int32(i % cfg.PartitionRows)
}

// ordinal is row's inverse, or -1 for a row the load never wrote.
func (cfg pagingConfig) ordinal(k, c int32) int {
	if k < 0 || c < 0 {
		return -1
	}
	var i int
	if k == 0 {
		i = int(c)
		if i >= cfg.LargeRows {
			return -1
		}
	} else {
		if int(c) >= cfg.PartitionRows {
			return -1
		}
		i = cfg.LargeRows + int(k-1)*cfg.PartitionRows + int(c)
	}
	if i >= cfg.Rows {
		return -1
	}
	return i
}

func runPaging(ctx context.Context, log *slog.Logger, url string, cfg pagingConfig) (*pagingReport, error) {
	rep := &pagingReport{Config: cfg}
	// The gateway always runs apart: its RSS is what the run measures.
	gw, err := startBenchServer(ctx, []string{url}, cfg.Conns, false, true, 0)
	if err != nil {
		return nil, err
	}
	defer gw.stop()
	sess, err := gocqlSession(gw, -1)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	if err := createBenchTable(func(stmt string) error { return sess.Query(stmt).Exec() }, 1); err != nil {
		return nil, err
	}
	pool, err := gatewayPool(ctx, url, 0)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	plans, err := loadDirectPlans(ctx, pool)
	if err != nil {
		return nil, err
	}
	shard, err := shardPool(url, cfg.Conns)
	if err != nil {
		return nil, err
	}
	defer shard.Close()
	start := time.Now()
	if err := loadPaging(ctx, shard, plans, cfg); err != nil {
		return nil, fmt.Errorf("loading rows: %w", err)
	}
	rep.LoadSeconds = time.Since(start).Seconds()
	log.Info("loaded", "rows", cfg.Rows, "s", rep.LoadSeconds)
	// Statistics make the scan's plan what it would be on a table that
	// grew over time rather than in one burst.
	if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
		return nil, err
	}
	for _, read := range []struct {
		name, cql string
		rows      int
	}{{"scan", cqlScan, cfg.Rows}, {"partition", cqlPartition, cfg.LargeRows}} {
		r, err := pagedRead(sess, gw.pid, cfg, read.name, read.cql, read.rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", read.name, err)
		}
		log.Info("read", "read", read.name, "rows", r.Rows, "pages", r.Pages, "rows/s", int(r.RowsSec))
		rep.Reads = append(rep.Reads, r)
	}
	return rep, nil
}

// loadPaging writes every row with the gateway's own INSERT, txRows
// rows to a transaction so that each commit is shared, and keeps window
// transactions queued so that the shard pool pipelines them rather than
// waiting a round trip for each; the window stays well inside the
// pool's queue, which refuses what overflows it.
func loadPaging(ctx context.Context, pool *sharding.Pool, plans *directPlans, cfg pagingConfig) error {
	const txRows, window = 200, 64
	ops := make([]*sharding.Op, 0, window)
	steps := make([]sharding.Step, 0, txRows)
	for i := range cfg.Rows {
		k, c := cfg.row(i)
		args, formats := plans.insert.args(rowValues(k, c), k, c)
		steps = append(steps, sharding.Step{Stmt: plans.insert.stmt, Args: args, Formats: formats})
		if len(steps) < txRows && i < cfg.Rows-1 {
			continue
		}
		op := sharding.NewTx(steps, nil)
		steps = make([]sharding.Step, 0, txRows)
		pool.Submit(op)
		if ops = append(ops, op); len(ops) == window {
			if err := waitAll(ctx, ops); err != nil {
				return err
			}
			ops = ops[:0]
		}
	}
	return waitAll(ctx, ops)
}

// pagedRead pages through cql one page at a time, as an application
// walking a large result does, and checks each row against the load.
func pagedRead(sess *gocql.Session, pid int, cfg pagingConfig, name, cql string, expected int) (pagingResult, error) {
	res := pagingResult{Read: name, Expected: int64(expected)}
	sampler := startRSSSampler(pid)
	seen := make([]bool, cfg.Rows)
	start := time.Now()
	var state []byte
	for {
		iter := sess.Query(cql).PageSize(cfg.PageSize).PageState(state).Iter()
		var k, c, v int32
		var w string
		for iter.Scan(&k, &c, &v, &w) {
			res.Rows++
			i := cfg.ordinal(k, c)
			if i < 0 || v != k+c {
				iter.Close()
				sampler.stop()
				return res, fmt.Errorf("row (%d, %d, %d) was never written", k, c, v)
			}
			if seen[i] {
				res.Duplicates++
			} else {
				seen[i] = true
				res.Distinct++
			}
		}
		state = iter.PageState()
		if err := iter.Close(); err != nil {
			sampler.stop()
			return res, err
		}
		res.Pages++
		if len(state) == 0 {
			break
		}
	}
	res.Seconds = time.Since(start).Seconds()
	res.RowsSec = float64(res.Rows) / res.Seconds
	res.RSSStartMB, res.RSSMaxMB, res.RSSEndMB = sampler.stop()
	return res, nil
}

// rssSampler reads a process's resident set every rssInterval.
type rssSampler struct {
	done       chan struct{}
	wg         sync.WaitGroup
	pid        int
	first, top float64
}

func startRSSSampler(pid int) *rssSampler {
	s := &rssSampler{done: make(chan struct{}), pid: pid}
	s.first = rssMB(pid)
	s.top = s.first
	s.wg.Go(func() {
		t := time.NewTicker(rssInterval)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				s.top = max(s.top, rssMB(s.pid))
			}
		}
	})
	return s
}

// stop ends the sampling and returns the resident set at the start, its
// maximum and its size now, in MB.
func (s *rssSampler) stop() (start, top, end float64) {
	close(s.done)
	s.wg.Wait()
	end = rssMB(s.pid)
	return s.first, max(s.top, end), end
}

// rssMB returns VmRSS of process pid in MB, or 0 if it cannot be read.
func rssMB(pid int) float64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

func (rep *pagingReport) print(w io.Writer) {
	fmt.Fprintf(w, "loaded %d rows in %.1f s; page size %d\n", rep.Config.Rows, rep.LoadSeconds, rep.Config.PageSize)
	fmt.Fprintf(w, "%-10s %10s %10s %7s %9s %10s %11s %9s %9s\n", "read", "rows", "distinct", "pages", "elapsed s",
		"rows/s", "RSS start MB", "max MB", "end MB")
	for _, r := range rep.Reads {
		fmt.Fprintf(w, "%-10s %10d %10d %7d %9.2f %10.0f %11.1f %9.1f %9.1f\n", r.Read, r.Rows, r.Distinct, r.Pages,
			r.Seconds, r.RowsSec, r.RSSStartMB, r.RSSMaxMB, r.RSSEndMB)
	}
}

// gocqlSession opens an unmodified gocql session on the gateway srv, kept
// to that gateway alone.
func gocqlSession(srv *benchServer, coalesce time.Duration) (*gocql.Session, error) {
	host, portText, _ := net.SplitHostPort(srv.addr.String())
	port, _ := strconv.Atoi(portText)
	cluster := gocql.NewCluster(host)
	cluster.Port = port
	cluster.Consistency = gocql.One
	cluster.Timeout = 10 * time.Second
	// gocql holds each write up to WriteCoalesceWaitTime (200µs by
	// default) for others to share its syscall, which at low concurrency
	// bounds a connection's rate; negative keeps the driver's default.
	if coalesce >= 0 {
		cluster.WriteCoalesceWaitTime = coalesce
	}
	// Gateways sharing the shards list each other as peers: the filter
	// keeps the session on its own gateway.
	cluster.HostFilter = gocql.HostFilterFunc(func(h *gocql.HostInfo) bool { return h.Port() == port })
	return cluster.CreateSession()
}
