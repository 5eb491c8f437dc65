package main_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkStream measures streaming: a cluster of three shards holding
// 200,000 rows at RF 3 grows to four with cqlpg shard add, beside four
// clients reading at QUORUM, whose p99 latency it reports before and
// during the join, without a limit and with --stream-throughput. Run it
// with go test ./cmd/cqlpg -run '^$' -bench Stream -benchtime 1x.
func BenchmarkStream(b *testing.B) {
	for _, limit := range []int{0, 30000, 20000} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			for range b.N {
				streamOnce(b, limit)
			}
		})
	}
}

func streamOnce(b *testing.B, limit int) {
	e := startElastic(b, 4, 3, 3, 10)
	const rows = 200000
	var csv strings.Builder
	csv.WriteString("k,v\n")
	for k := 100; k < 100+rows; k++ {
		fmt.Fprintf(&csv, "%d,value-%d-abcdefghijklmnopqrstuvwxyz\n", k, k)
	}
	file := filepath.Join(b.TempDir(), "rows.csv")
	if err := os.WriteFile(file, []byte(csv.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	e.cqlpg("load", "--shard", e.pg[0].URL(), "elastic.t", file)

	// The foreground: QUORUM reads of loaded keys, timed.
	var (
		mu      sync.Mutex
		took    []time.Duration
		stopped = make(chan struct{})
		wg      sync.WaitGroup
	)
	for w := range 4 {
		sess := e.sessions[w%2]
		wg.Go(func() {
			for {
				select {
				case <-stopped:
					return
				default:
				}
				k := 100 + rand.IntN(rows)
				start := time.Now()
				var v string
				if err := sess.Query("SELECT v FROM elastic.t WHERE k = ?", k).Scan(&v); err != nil {
					b.Errorf("read %d: %v", k, err)
				}
				mu.Lock()
				took = append(took, time.Since(start))
				mu.Unlock()
			}
		})
	}
	p99 := func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		slices.Sort(took)
		p := took[len(took)*99/100]
		took = took[:0]
		return p
	}
	time.Sleep(3 * time.Second)
	before := p99()
	b.ResetTimer()
	out := e.cqlpg("shard", "add", "--stream-throughput", strconv.Itoa(limit), "--shard", e.pg[0].URL(), e.pg[3].URL())
	b.StopTimer()
	during := p99()
	close(stopped)
	wg.Wait()
	m := regexp.MustCompile(`streamed \d+ ranges, (\d+) rows, .* in (\S+)`).FindStringSubmatch(out)
	if m == nil {
		b.Fatalf("no streaming summary:\n%s", out)
	}
	streamed, _ := strconv.Atoi(m[1])
	d, _ := time.ParseDuration(m[2])
	b.ReportMetric(float64(streamed)/d.Seconds(), "rows/s")
	b.ReportMetric(float64(before.Microseconds())/1000, "p99-before-ms")
	b.ReportMetric(float64(during.Microseconds())/1000, "p99-during-ms")
}
