package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/bulk"
)

const unloadUsage = `Usage: cqlpg unload [flags] KEYSPACE.TABLE FILE.csv

Writes every row of a table to a CSV file in the format cqlsh's COPY ...
TO writes: a header row of the column names, then the rows in cqlsh's
value forms, null as an empty field. Each token range is read once, from
one live replica, and streamed, so memory stays small whatever the
table's size. FILE.csv "-" writes to stdout. Progress goes to stderr.

Flags:
`

func unload(args []string) int {
	fs := flag.NewFlagSet("unload", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), unloadUsage); fs.PrintDefaults() }
	shards := addShardFlags(fs)
	ks, table, file, ok := tableAndFile(fs, args, "cqlpg unload")
	if !ok {
		return 2
	}
	return shards.withBulk("cqlpg unload", func(ctx context.Context, c *bulk.Cluster) int {
		var w io.Writer = os.Stdout
		if file != "-" {
			f, err := os.Create(file)
			if err != nil {
				fmt.Fprintln(os.Stderr, "cqlpg unload:", err)
				return 1
			}
			defer f.Close()
			w = f
		}
		p := newRateLine(os.Stderr)
		n, err := c.Unload(ctx, ks, table, w, func(up bulk.UnloadProgress) {
			p.set(up.Rows, up.Rows, fmt.Sprintf("token ranges %d/%d", up.RangesDone, up.RangesTotal))
		})
		p.stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "cqlpg unload:", err)
			return 1
		}
		if f, ok := w.(*os.File); ok && f != os.Stdout {
			if err := f.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "cqlpg unload:", err)
				return 1
			}
		}
		if file != "-" {
			fmt.Printf("unloaded %d rows of %s.%s in %v\n", n, ks, table, p.elapsed().Round(time.Millisecond))
		}
		return 0
	})
}
