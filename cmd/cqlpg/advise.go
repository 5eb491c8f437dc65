package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cqlpg/cqlpg/gateway/advise"
	"github.com/cqlpg/cqlpg/gateway/cluster"
)

// adviseCommand runs cqlpg advise: the data modelling findings on the
// shards' data, as a table or as JSON.
func adviseCommand(args []string) int {
	fs := flag.NewFlagSet("advise", flag.ContinueOnError)
	shards := addShardFlags(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	limit := fs.Int64("partition-limit", 100<<20, "partition size, in `bytes`, past which a partition is a problem")
	warn := fs.Int64("partition-warn", 10<<20, "partition size, in `bytes`, past which a partition is a warning")
	few := fs.Int("few-keys", 10, "distinct partition keys below which a table has too few")
	hot := fs.Float64("hot-share", 0.1, "share of a table's rows one partition may hold")
	timeout := fs.Duration("statement-timeout", 5*time.Second, "bound of each statement on a shard")
	exact := fs.Bool("exact", false, "measure the largest partitions by reading every row (within the statement timeout) instead of estimating them")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: cqlpg advise [flags] [KEYSPACE[.TABLE]]\n\nReports where tables break the data modelling rules, with the evidence and what to do.")
		fs.PrintDefaults()
	}
	rest, err := parseInterleaved(fs, args)
	if err != nil || len(rest) > 1 {
		return 2
	}
	opts := advise.Options{PartitionLimit: *limit, PartitionWarn: *warn, FewKeys: *few, HotShare: *hot, StatementTimeout: *timeout, Exact: *exact}
	if len(rest) == 1 {
		opts.Keyspace, opts.Table, _ = strings.Cut(rest[0], ".")
	}
	return shards.with("cqlpg advise", func(ctx context.Context, c *cluster.Cluster, _ []string) int {
		rep, err := advise.Run(ctx, c, opts)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cqlpg advise:", err)
			return 1
		}
		if *asJSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			enc.Encode(rep)
			return 0
		}
		printAdvice(rep)
		return 0
	})
}

// printAdvice prints a report as a table, then each finding's rule and
// advice.
func printAdvice(rep *advise.Report) {
	for _, s := range rep.Skipped {
		fmt.Fprintln(os.Stderr, "cqlpg advise: skipped", s)
	}
	if len(rep.Findings) == 0 {
		fmt.Printf("%d tables: no finding, in %v\n", rep.Tables, rep.Took.Round(time.Millisecond))
		return
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "TABLE\tFINDING\tSEVERITY\tEVIDENCE")
	for _, f := range rep.Findings {
		fmt.Fprintf(w, "%s.%s\t%s\t%s\t%s\n", f.Keyspace, f.Table, f.Kind, f.Severity, f.Evidence)
	}
	w.Flush()
	fmt.Println()
	for _, f := range rep.Findings {
		fmt.Printf("%s.%s %s:\n  rule: %s\n  do: %s\n", f.Keyspace, f.Table, f.Kind, f.Rule, f.Advice)
	}
	fmt.Printf("\n%d tables, %d findings, in %v\n", rep.Tables, len(rep.Findings), rep.Took.Round(time.Millisecond))
}
