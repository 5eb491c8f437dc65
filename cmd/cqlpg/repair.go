package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/repair"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// shardFlags are the flags naming the shards a tool works on, as serve's.
type shardFlags struct {
	shards      stringList
	localShards *int
	dataDir     *string
}

func addShardFlags(fs *flag.FlagSet) *shardFlags {
	f := &shardFlags{}
	fs.Var(&f.shards, "shard", "PostgreSQL `URL` of a shard, repeatable, in ring order, optionally placed as DC:RACK=URL, "+
		"as given to cqlpg serve; without it, the managed local shards")
	f.localShards = fs.Int("local-shards", 3, "number of managed local shards")
	f.dataDir = fs.String("data-dir", "./cqlpg-data", "`directory` of the managed local shards")
	return f
}

// parseInterleaved parses flags placed before or after the positional
// arguments, which it returns.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// with runs fn on the shards, with a context that ends on SIGINT or
// SIGTERM, and gives it their connection strings in ring order; a failure
// to open them is reported under command's name.
func (f *shardFlags) with(command string, fn func(ctx context.Context, c *cluster.Cluster, urls []string) int) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	c, urls, closeShards, err := f.open(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, command+":", err)
		return 1
	}
	defer closeShards()
	return fn(ctx, c, urls)
}

// open opens the shards for a tool: those given with --shard, or
// the managed local ones, started if they are not running (and stopped
// again by the returned function). urls are the members' connection
// strings, in ring order, which may be more than those given: any one
// member reaches the cluster.
func (f *shardFlags) open(ctx context.Context) (c *cluster.Cluster, urls []string, closeShards func(), err error) {
	cfg := gateway.Config{Log: slog.New(slog.DiscardHandler)}
	for _, spec := range f.shards {
		cfg.Shards = append(cfg.Shards, parseShard(spec))
	}
	stop := func() {}
	if len(f.shards) == 0 {
		clusters, started, err := startManagedShards(ctx, *f.dataDir, *f.localShards)
		if err != nil {
			return nil, nil, nil, err
		}
		stop = func() { stopLocalShards(started, slog.New(slog.DiscardHandler)) }
		for _, c := range clusters {
			cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: c.URL()})
		}
	}
	if c, err = gateway.OpenCluster(ctx, cfg); err != nil {
		stop()
		return nil, nil, nil, err
	}
	for _, s := range c.Topology().Shards {
		urls = append(urls, s.URL)
	}
	return c, urls, func() { c.Close(); stop() }, nil
}

// startManagedShards starts the managed local shards of a data directory
// that cqlpg serve created, or uses them where they run, and returns them
// and those it started.
func startManagedShards(ctx context.Context, dataDir string, n int) (all, started []*localpg.Cluster, err error) {
	if _, err := os.Stat(dataDir); err != nil {
		return nil, nil, fmt.Errorf("no managed local shards in %s (give the shards with --shard): %w", dataDir, err)
	}
	root, _, err := localpg.Root(dataDir)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(filepath.Join(root, "shard0")); err != nil {
		return nil, nil, fmt.Errorf("no managed local shards in %s (give the shards with --shard)", dataDir)
	}
	running := make([]bool, n)
	for i := range n {
		_, err := os.Stat(filepath.Join(root, "shard"+strconv.Itoa(i), "postmaster.pid"))
		running[i] = err == nil
	}
	all, err = localpg.StartMany(ctx, root, n, localpg.Options{})
	if err != nil {
		return nil, nil, err
	}
	for i, c := range all {
		if !running[i] {
			started = append(started, c)
		}
	}
	return all, started, nil
}

const repairUsage = `Usage: cqlpg repair [flags] [KEYSPACE[.TABLE]]

Brings the replicas of every token range of a table, of every table of a
keyspace, or of everything, to the same data: each range's replicas are
compared by digest and the ranges that differ are merged by Cassandra's
reconciliation rules. It runs while clients write. A replica that does
not answer is left out and reported; the exit status is then 1.

Flags:
`

func repairCommand(args []string) int {
	fs := flag.NewFlagSet("repair", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), repairUsage); fs.PrintDefaults() }
	shards := addShardFlags(fs)
	timeout := fs.Duration("timeout", 10*time.Second, "time a replica has to answer one statement before it is left out")
	parallel := fs.Int("parallel", 2, "token ranges repaired at once")
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return 2
	}
	opts := repair.Options{Timeout: *timeout, Parallel: *parallel}
	switch len(positional) {
	case 0:
	case 1:
		if opts.Keyspace, opts.Table, err = parseTableName(positional[0]); err != nil {
			fmt.Fprintln(os.Stderr, "cqlpg repair:", err)
			return 2
		}
	default:
		fs.Usage()
		return 2
	}
	return shards.with("cqlpg repair", func(ctx context.Context, c *cluster.Cluster, _ []string) int {
		return runRepair(ctx, c, opts)
	})
}

// runRepair runs cqlpg repair on the shards of c.
func runRepair(ctx context.Context, c *cluster.Cluster, opts repair.Options) int {
	bar := newProgressBar(os.Stderr)
	opts.Progress = bar.update
	res, err := repair.Run(ctx, c, opts)
	bar.finish()
	what := "everything"
	if opts.Keyspace != "" {
		what = opts.Keyspace
		if opts.Table != "" {
			what += "." + opts.Table
		}
	}
	for _, s := range res.Skipped {
		fmt.Fprintln(os.Stderr, "cqlpg repair: skipped", s)
	}
	if res.Tables > 0 || err == nil {
		fmt.Printf("repaired %s: %d tables, %d token ranges, %d differed, %d rows moved, in %v\n",
			what, res.Tables, res.Ranges, res.RangesRepaired, res.RowsMoved, res.Duration.Round(time.Millisecond))
		if v := res.Views; v.Relogged > 0 || v.Undefined > 0 {
			fmt.Printf("materialized views: %d base rows compared with their views, %d view rows their base does not define deleted\n",
				v.Relogged, v.Undefined)
		}
	}
	if err != nil {
		if !bar.reported || res.Tables == 0 {
			fmt.Fprintln(os.Stderr, "cqlpg repair:", err)
		} else {
			fmt.Fprintln(os.Stderr, "cqlpg repair: not every replica was repaired; run it again once they are all up")
		}
		return 1
	}
	return 0
}

// parseTableName reads KEYSPACE or KEYSPACE.TABLE, each part a CQL name:
// folded to lower case unless double-quoted.
func parseTableName(s string) (keyspace, table string, err error) {
	var parts []string
	for rest := s; ; {
		var part string
		if strings.HasPrefix(rest, `"`) {
			end := 1
			for ; end < len(rest); end++ {
				if rest[end] == '"' {
					if end+1 < len(rest) && rest[end+1] == '"' {
						end++
						continue
					}
					break
				}
			}
			if end >= len(rest) {
				return "", "", fmt.Errorf("unterminated quoted name in %q", s)
			}
			part, rest = strings.ReplaceAll(rest[1:end], `""`, `"`), rest[end+1:]
		} else {
			i := strings.IndexByte(rest, '.')
			if i < 0 {
				i = len(rest)
			}
			part, rest = strings.ToLower(rest[:i]), rest[i:]
		}
		if part == "" {
			return "", "", fmt.Errorf("bad table name %q: want KEYSPACE or KEYSPACE.TABLE", s)
		}
		parts = append(parts, part)
		if rest == "" {
			break
		}
		if rest[0] != '.' || len(parts) == 2 {
			return "", "", fmt.Errorf("bad table name %q: want KEYSPACE or KEYSPACE.TABLE", s)
		}
		rest = rest[1:]
	}
	if len(parts) == 1 {
		return parts[0], "", nil
	}
	return parts[0], parts[1], nil
}

// progressBar shows a repair's progress: one line redrawn in place on a
// terminal, plain lines (at most one per second and percent) otherwise.
type progressBar struct {
	w        io.Writer
	tty      bool
	began    time.Time
	last     time.Time
	lastPct  int
	drawn    bool
	reported bool // a failure was printed
	p        repair.Progress
}

func newProgressBar(f *os.File) *progressBar {
	b := &progressBar{w: f, began: time.Now(), lastPct: -1}
	if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		b.tty = true
	}
	return b
}

const barWidth = 30

func (b *progressBar) update(p repair.Progress) {
	b.p = p
	if p.Err != nil {
		b.clear()
		fmt.Fprintln(b.w, "cqlpg repair:", p.Err)
		b.reported = true
		b.draw()
		return
	}
	pct := 100
	if p.RangesTotal > 0 {
		pct = p.RangesDone * 100 / p.RangesTotal
	}
	now := time.Now()
	if b.tty {
		if now.Sub(b.last) >= 100*time.Millisecond || p.RangesDone == p.RangesTotal {
			b.last = now
			b.draw()
		}
		return
	}
	if pct != b.lastPct && (now.Sub(b.last) >= time.Second || p.RangesDone == p.RangesTotal) {
		b.last, b.lastPct = now, pct
		fmt.Fprintln(b.w, b.line())
	}
}

// line is the progress as text.
func (b *progressBar) line() string {
	p := b.p
	pct := 100.0
	if p.RangesTotal > 0 {
		pct = float64(p.RangesDone) * 100 / float64(p.RangesTotal)
	}
	s := fmt.Sprintf("ranges %d/%d %3.0f%%, %d differed, %d rows moved", p.RangesDone, p.RangesTotal, pct,
		p.RangesRepaired, p.RowsMoved)
	if p.Table != "" {
		s += ", " + p.Keyspace + "." + p.Table
	}
	if b.tty {
		filled := int(pct / 100 * barWidth)
		s = "[" + strings.Repeat("#", filled) + strings.Repeat(".", barWidth-filled) + "] " + s
	}
	return s
}

func (b *progressBar) draw() {
	if !b.tty {
		return
	}
	fmt.Fprint(b.w, "\r\x1b[K"+b.line())
	b.drawn = true
}

func (b *progressBar) clear() {
	if b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
		b.drawn = false
	}
}

// finish leaves the last state of the bar on its own line.
func (b *progressBar) finish() {
	if b.tty {
		if b.drawn {
			fmt.Fprintln(b.w)
		}
		return
	}
	if b.lastPct != 100 && b.p.RangesTotal > 0 {
		fmt.Fprintln(b.w, b.line())
	}
}
