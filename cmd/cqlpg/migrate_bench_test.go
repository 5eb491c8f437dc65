package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
