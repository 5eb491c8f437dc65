package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/bulk"
)

// benchLoadRows is the size of the file both arms of BenchmarkLoad write.
const benchLoadRows = 20000

// BenchmarkLoad writes the same rows into a table on two shards at RF=2,
// once with cqlpg load and once as INSERTs through a gateway, prepared
// and sent by 32 goroutines. Each reports rows/s.
func BenchmarkLoad(b *testing.B) {
	e := sharedBulkEnv(b)
	// Each run writes into an empty table, as a migration does.
	empty := func(b *testing.B) {
		b.StopTimer()
		defer b.StartTimer()
		for _, q := range []string{
			"CREATE KEYSPACE IF NOT EXISTS bench_load WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
			"DROP TABLE IF EXISTS bench_load.kv",
			"CREATE TABLE bench_load.kv (k int, c int, v text, w bigint, PRIMARY KEY (k, c))",
		} {
			if err := e.sess.Query(q).Exec(); err != nil {
				b.Fatal(err)
			}
		}
	}
	file := filepath.Join(b.TempDir(), "kv.csv")
	var sb strings.Builder
	sb.WriteString("k,c,v,w\n")
	for i := range benchLoadRows {
		fmt.Fprintf(&sb, "%d,%d,value number %d,%d\n", i/10, i%10, i, int64(i)*7919)
	}
	if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("load", func(b *testing.B) {
		var took time.Duration
		for range b.N {
			empty(b)
			c := e.reopen(b)
			start := time.Now()
			if _, err := c.Load(context.Background(), "bench_load", "kv", file, bulk.LoadOptions{}); err != nil {
				b.Fatal(err)
			}
			took += time.Since(start)
		}
		b.ReportMetric(float64(b.N*benchLoadRows)/took.Seconds(), "rows/s")
	})
	b.Run("inserts", func(b *testing.B) {
		var took time.Duration
		for range b.N {
			empty(b)
			start := time.Now()
			var wg sync.WaitGroup
			errs := make(chan error, 32)
			for w := range 32 {
				wg.Go(func() {
					for i := w; i < benchLoadRows; i += 32 {
						if err := e.sess.Query("INSERT INTO bench_load.kv (k, c, v, w) VALUES (?, ?, ?, ?)",
							i/10, i%10, fmt.Sprintf("value number %d", i), int64(i)*7919).Exec(); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
			took += time.Since(start)
		}
		b.ReportMetric(float64(b.N*benchLoadRows)/took.Seconds(), "rows/s")
	})
}
