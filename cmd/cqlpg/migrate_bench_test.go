package main_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// BenchmarkMigrateCopy copies 200,000 rows of (k int, c int, v text,
// n bigint) from one local cqlpg cluster (two shards) to another (one
// shard) with cqlpg migrate copy, and reports the rows copied a second
// (the command's own time, without its start).
//
//	go test ./cmd/cqlpg -run '^$' -bench MigrateCopy -benchtime 1x
func BenchmarkMigrateCopy(b *testing.B) {
	e := sharedBulkEnv(b)
	bin := buildCqlpg(b)
	const rows = 200000
	e.sess.Query("CREATE KEYSPACE IF NOT EXISTS migbench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").Exec()
	if err := e.sess.Query("CREATE TABLE IF NOT EXISTS migbench.t (k int, c int, v text, n bigint, PRIMARY KEY (k, c))").Exec(); err != nil {
		b.Fatal(err)
	}
	var csv strings.Builder
	csv.WriteString("k,c,v,n\n")
	for i := range rows {
		fmt.Fprintf(&csv, "%d,%d,value-%d-abcdefghijklmnopqrstuvwxyz,%d\n", i/20, i%20, i, int64(i)<<20)
	}
	file := filepath.Join(b.TempDir(), "rows.csv")
	if err := os.WriteFile(file, []byte(csv.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, errOut, code := runCqlpg(bin, append([]string{"load", "migbench.t", file}, e.args...)...); code != 0 {
		b.Fatalf("load: exit %d, %s %s", code, out, errOut)
	}
	took := regexp.MustCompile(`copied (\d+) rows of migbench.t in (\S+)`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dst := startMigrateTarget(b)
		base := []string{"--origin", e.addr, "--shard", dst.shard}
		if out, errOut, code := runCqlpg(bin, append([]string{"migrate", "schema", "--keyspaces", "migbench", "--dc-map", "datacenter1=east"}, base...)...); code != 0 {
			b.Fatalf("schema: exit %d, %s %s", code, out, errOut)
		}
		b.StartTimer()
		out, errOut, code := runCqlpg(bin, append([]string{"migrate", "copy", "migbench.t"}, base...)...)
		m := took.FindStringSubmatch(out)
		if code != 0 || m == nil || m[1] != fmt.Sprint(rows) {
			b.Fatalf("copy: exit %d, %s %s", code, out, errOut)
		}
		d, _ := time.ParseDuration(m[2])
		b.ReportMetric(rows/d.Seconds(), "rows/s")
	}
}

// BenchmarkMigrateProxy measures what cqlpg serve --origin adds to a
// request: one gocql client runs prepared point reads and writes one at
// a time against the origin directly and through the gateway (reading
// from the origin, writing to both), in alternating rounds, and reports
// each path's median and 99th percentile latency.
//
//	go test ./cmd/cqlpg -run '^$' -bench MigrateProxy -benchtime 1x
func BenchmarkMigrateProxy(b *testing.B) {
	e := sharedBulkEnv(b)
	bin := buildCqlpg(b)
	e.sess.Query("CREATE KEYSPACE IF NOT EXISTS migproxybench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}").Exec()
	if err := e.sess.Query("CREATE TABLE IF NOT EXISTS migproxybench.t (k int PRIMARY KEY, v text)").Exec(); err != nil {
		b.Fatal(err)
	}
	const keys = 1000
	for k := range keys {
		if err := e.sess.Query("INSERT INTO migproxybench.t (k, v) VALUES (?, ?)", k, "value").Exec(); err != nil {
			b.Fatal(err)
		}
	}
	dst := startMigrateTarget(b)
	base := []string{"--origin", e.addr, "--shard", dst.shard}
	if out, errOut, code := runCqlpg(bin, append([]string{"migrate", "schema", "--keyspaces", "migproxybench"}, base...)...); code != 0 {
		b.Fatalf("schema: exit %d, %s %s", code, out, errOut)
	}
	p := startServeWith(b, bin, base...)
	defer p.stop(b)
	// The driver's write coalescing off: its timer would add about a
	// millisecond to every request of a lone client.
	session := func(addr string) *gocql.Session {
		host, port, _ := net.SplitHostPort(addr)
		cc := gocql.NewCluster(host)
		cc.Port, _ = strconv.Atoi(port)
		cc.DisableInitialHostLookup = true
		cc.WriteCoalesceWaitTime = 0
		s, err := cc.CreateSession()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(s.Close)
		return s
	}
	sessions := map[string]*gocql.Session{"direct": session(e.addr), "proxy": session("127.0.0.1:" + strconv.Itoa(p.cqlPort))}
	kinds := map[string]func(s *gocql.Session, i int) error{
		"read": func(s *gocql.Session, i int) error {
			var v string
			return s.Query("SELECT v FROM migproxybench.t WHERE k = ?", i%keys).Scan(&v)
		},
		"write": func(s *gocql.Session, i int) error {
			return s.Query("INSERT INTO migproxybench.t (k, v) VALUES (?, ?)", i%keys, "value").Exec()
		},
	}
	const rounds, perRound = 10, 500
	for i := 0; i < b.N; i++ {
		samples := map[string][]time.Duration{}
		for round := range rounds {
			for _, path := range []string{"direct", "proxy"} {
				for kind, run := range kinds {
					for j := range perRound {
						start := time.Now()
						if err := run(sessions[path], round*perRound+j); err != nil {
							b.Fatalf("%s %s: %v", path, kind, err)
						}
						if round > 0 { // the first round warms up
							samples[path+" "+kind] = append(samples[path+" "+kind], time.Since(start))
						}
					}
				}
			}
		}
		for name, d := range samples {
			slices.Sort(d)
			p50, p99 := d[len(d)/2], d[len(d)*99/100]
			unit := strings.ReplaceAll(name, " ", "-")
			b.ReportMetric(float64(p50.Microseconds()), unit+"-p50-µs")
			b.ReportMetric(float64(p99.Microseconds()), unit+"-p99-µs")
		}
	}
}
