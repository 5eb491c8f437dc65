package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/bulk"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

const loadUsage = `Usage: cqlpg load [flags] KEYSPACE.TABLE FILE.csv

Loads a CSV file in the format cqlsh's COPY ... TO writes (a header row
of column names, cqlsh's value forms, null as an empty field) straight
into the shards, each row on every replica of its partition. The cells
get one write time for the whole load (--timestamp, else the clock when
the load starts), and are reconciled with what the table holds as an
INSERT at that time would be.

Progress goes to stderr. A progress file (FILE.csv.progress unless
--state says otherwise) records the last batch committed on every
replica; a load started again on the same file and table continues from
there with the same timestamp. The batch that was in flight is applied
again, which changes nothing: every write is an upsert that keeps the
newer cell. The file is removed when the load completes.

Flags:
`

func load(args []string) int {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), loadUsage); fs.PrintDefaults() }
	shards := addShardFlags(fs)
	ts := fs.Int64("timestamp", 0, "write time of the cells in `microseconds` since the epoch (default: the clock when the load starts)")
	batchRows := fs.Int("batch-rows", 5000, "file rows per batch")
	state := fs.String("state", "", "progress `file` (default FILE.csv.progress)")
	ks, table, file, ok := tableAndFile(fs, args, "cqlpg load")
	if !ok {
		return 2
	}
	if *state == "" {
		*state = file + ".progress"
	}
	return shards.withBulk("cqlpg load", func(ctx context.Context, c *bulk.Cluster) int {
		p := newRateLine(os.Stderr)
		defer p.stop()
		res, err := c.Load(ctx, ks, table, file, bulk.LoadOptions{
			Timestamp: *ts, BatchRows: *batchRows, State: *state,
			Progress: func(lp bulk.LoadProgress) {
				if lp.Resumed && lp.Rows == lp.StartRows {
					fmt.Fprintf(os.Stderr, "cqlpg load: resuming after %d rows (%s of %s); the batch in flight when the load stopped "+
						"is applied again, which changes nothing\n", lp.Rows, byteSize(lp.Offset), byteSize(lp.Size))
				}
				p.set(lp.Rows-lp.StartRows, lp.Rows, fmt.Sprintf("%.1f%% of %s", float64(lp.Offset)*100/float64(max(lp.Size, 1)), byteSize(lp.Size)))
			},
		})
		p.stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "cqlpg load:", err)
			if res.Rows > 0 {
				fmt.Fprintf(os.Stderr, "cqlpg load: %d rows are loaded; run the same command again to continue\n", res.Rows)
			}
			return 1
		}
		fmt.Printf("loaded %d rows into %s.%s at timestamp %d in %v\n", res.Rows, ks, table, res.Timestamp,
			p.elapsed().Round(time.Millisecond))
		return 0
	})
}

// withBulk runs fn on the shards as bulk.Cluster, with a context that ends
// on SIGINT or SIGTERM.
func (f *shardFlags) withBulk(command string, fn func(ctx context.Context, c *bulk.Cluster) int) int {
	return f.with(command, func(ctx context.Context, gc *cluster.Cluster, urls []string) int {
		c, err := bulk.Open(ctx, gc.Topology().Ring, urls)
		if err != nil {
			fmt.Fprintln(os.Stderr, command+":", err)
			return 1
		}
		return fn(ctx, c)
	})
}

// rateLine prints a long operation's progress on stderr at least once a
// second: rows, rows per second, and how far it is. On a terminal it
// redraws one line.
type rateLine struct {
	w     io.Writer
	tty   bool
	began time.Time
	mu    sync.Mutex
	run   int64 // rows this run, for the rate
	total int64 // rows in all
	extra string
	quit  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
}

func newRateLine(f *os.File) *rateLine {
	p := &rateLine{w: f, began: time.Now(), quit: make(chan struct{})}
	if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		p.tty = true
	}
	p.wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				p.print(false)
			case <-p.quit:
				return
			}
		}
	})
	return p
}

// set records the rows done this run and in all, and how far the work is.
func (p *rateLine) set(run, total int64, extra string) {
	p.mu.Lock()
	p.run, p.total, p.extra = run, total, extra
	p.mu.Unlock()
}

func (p *rateLine) elapsed() time.Duration { return time.Since(p.began) }

func (p *rateLine) line() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	rate := 0.0
	if secs := time.Since(p.began).Seconds(); secs > 0 {
		rate = float64(p.run) / secs
	}
	s := fmt.Sprintf("%d rows, %.0f rows/s", p.total, rate)
	if p.extra != "" {
		s += ", " + p.extra
	}
	return s
}

func (p *rateLine) print(final bool) {
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K"+p.line())
		if final {
			fmt.Fprintln(p.w)
		}
		return
	}
	fmt.Fprintln(p.w, p.line())
}

// stop prints the last state and stops the ticker; later calls do nothing.
func (p *rateLine) stop() {
	p.once.Do(func() {
		close(p.quit)
		p.wg.Wait()
		p.print(true)
	})
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// tableAndFile parses the flags and the KEYSPACE.TABLE FILE arguments of
// load and unload, reporting what is wrong on stderr.
func tableAndFile(fs *flag.FlagSet, args []string, cmd string) (ks, table, file string, ok bool) {
	positional, err := parseInterleaved(fs, args)
	if err != nil {
		return "", "", "", false
	}
	if len(positional) != 2 {
		fs.Usage()
		return "", "", "", false
	}
	ks, table, err = parseTableName(positional[0])
	if err == nil && table == "" {
		err = fmt.Errorf("bad table name %q: want KEYSPACE.TABLE", positional[0])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, cmd+":", err)
		return "", "", "", false
	}
	return ks, table, positional[1], true
}
