package gateway_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/repair"
)

// The tests of the gateway's metrics drive a gateway of their own with
// gocql and read /metrics over HTTP, as Prometheus does.

// series is one scrape of /metrics: each sample's value by its name and
// labels as written, e.g. `cqlpg_statements_total{kind="select"}`, and
// each metric family as "# TYPE name".
type series map[string]float64

// scrape reads a gateway's /metrics.
func scrape(t *testing.T, s *gateway.Server) series {
	t.Helper()
	resp, err := http.Get("http://" + s.HTTPAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	out := series{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, _, _ = strings.Cut(name, " ")
			out["# TYPE "+name] = 1
		}
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// has fails the test unless the series exists.
func (s series) has(t *testing.T, name string) float64 {
	t.Helper()
	v, ok := s[name]
	if !ok {
		t.Errorf("metrics lack %s", name)
	}
	return v
}

// grew checks that a series grew by at least min since before.
func grew(t *testing.T, before, after series, name string, min float64) {
	t.Helper()
	if d := after.has(t, name) - before[name]; d < min {
		t.Errorf("%s grew by %v, want at least %v", name, d, min)
	}
}

// metricsGateway starts a gateway serving HTTP, logging into a buffer,
// with a configuration change.
func metricsGateway(t *testing.T, change func(*gateway.Config)) (*gateway.Server, *lockedBuffer) {
	t.Helper()
	return startLoggedGateway(t, func(c *gateway.Config) {
		c.HTTP = "127.0.0.1:0"
		change(c)
	})
}

func TestMetrics(t *testing.T) {
	s, log := metricsGateway(t, func(*gateway.Config) {})
	sess := sessionOn(t, s, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS metrics WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE IF NOT EXISTS metrics.t (k int PRIMARY KEY, v text)")
	before := scrape(t, s)

	const n = 20
	for i := range n {
		if err := sess.Query("INSERT INTO metrics.t (k, v) VALUES (?, ?)", i, "v").Exec(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		var v string
		if err := sess.Query("SELECT v FROM metrics.t WHERE k = ?", i).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	b := sess.NewBatch(gocql.LoggedBatch)
	b.Query("INSERT INTO metrics.t (k, v) VALUES (?, ?)", 100, "b")
	b.Query("UPDATE metrics.t SET v = ? WHERE k = ?", "b", 101)
	if err := sess.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	if err := sess.Query("SELECT v FROM metrics.nosuch WHERE k = ?", 1).Exec(); err == nil {
		t.Fatal("SELECT from a table that does not exist succeeded")
	}
	if _, err := s.Repair(context.Background(), repair.Options{Keyspace: "metrics"}); err != nil {
		t.Fatal(err)
	}

	after := scrape(t, s)
	grew(t, before, after, `cqlpg_requests_total{opcode="EXECUTE"}`, 2*n)
	grew(t, before, after, `cqlpg_requests_total{opcode="BATCH"}`, 1)
	grew(t, before, after, `cqlpg_statements_total{kind="insert"}`, n)
	grew(t, before, after, `cqlpg_statements_total{kind="select"}`, n)
	grew(t, before, after, `cqlpg_statements_total{kind="batch"}`, 1)
	grew(t, before, after, `cqlpg_request_duration_seconds_count{kind="insert"}`, n)
	grew(t, before, after, `cqlpg_request_duration_seconds_count{kind="select"}`, n)
	grew(t, before, after, `cqlpg_request_duration_seconds_bucket{kind="select",le="+Inf"}`, n)
	if after.has(t, `cqlpg_request_duration_seconds_sum{kind="select"}`) <= before[`cqlpg_request_duration_seconds_sum{kind="select"}`] {
		t.Error("the sum of the SELECTs' latencies did not grow")
	}
	// The unknown table is refused at PREPARE: Invalid.
	grew(t, before, after, `cqlpg_errors_total{code="0x2200"}`, 1)
	for _, k := range []string{"none", "update", "delete", "lwt", "counter", "ddl", "use", "other"} {
		after.has(t, fmt.Sprintf(`cqlpg_statements_total{kind=%q}`, k))
	}

	// Every shard took writes at replication factor 3.
	for i := range len(shardURLs) {
		shard := fmt.Sprintf("shard%d", i)
		label := fmt.Sprintf(`{shard=%q}`, shard)
		grew(t, before, after, "cqlpg_shard_ops_total"+label, n)
		grew(t, before, after, "cqlpg_shard_pipeline_seconds_count"+label, 1)
		after.has(t, "cqlpg_shard_op_errors_total"+label)
		after.has(t, "cqlpg_shard_ops_queued"+label)
		after.has(t, "cqlpg_shard_connections_busy"+label)
		if v := after.has(t, "cqlpg_shard_connections_open"+label); v < 1 {
			t.Errorf("%s has %v connections open, want at least 1", shard, v)
		}
		if v := after.has(t, "cqlpg_shard_connections_max"+label); v < 1 {
			t.Errorf("%s may open %v connections", shard, v)
		}
		after.has(t, "cqlpg_shard_up"+label)
		if v := after.has(t, `cqlpg_shard_state{shard="`+shard+`",state="normal"}`); v != 1 {
			t.Errorf("%s: cqlpg_shard_state normal %v", shard, v)
		}
	}
	if v := after.has(t, "cqlpg_ring_version"); v < 1 {
		t.Errorf("cqlpg_ring_version %v", v)
	}

	ranges := after.has(t, "cqlpg_repair_ranges")
	if done := after.has(t, "cqlpg_repair_ranges_done"); ranges == 0 || done != ranges {
		t.Errorf("repair did %v of %v ranges, want all of them", done, ranges)
	}
	if v := after.has(t, "cqlpg_repair_running"); v != 0 {
		t.Errorf("cqlpg_repair_running %v after the repair", v)
	}
	grew(t, before, after, "cqlpg_repairs_total", 1)
	after.has(t, "cqlpg_repair_rows_moved")
	after.has(t, "cqlpg_repair_started_timestamp_seconds")
	if v := after.has(t, "cqlpg_connections"); v < 1 {
		t.Errorf("cqlpg_connections %v with a session open", v)
	}
	if v := after.has(t, "cqlpg_prepared_statements"); v < 2 {
		t.Errorf("cqlpg_prepared_statements %v after two statements were prepared", v)
	}

	// The hint replayer counts the hints pending for each shard once a
	// second.
	for i := range len(shardURLs) {
		name := fmt.Sprintf(`cqlpg_hints_pending{shard="shard%d"}`, i)
		eventually(t, "metrics serve "+name, func() bool {
			_, ok := scrape(t, s)[name]
			return ok
		})
	}
	// Every metric the dashboard shows is served.
	dashboard, err := os.ReadFile(filepath.Join("..", "docs", "grafana", "cqlpg.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range regexp.MustCompile(`cqlpg_[a-z_]+`).FindAllString(string(dashboard), -1) {
		family := regexp.MustCompile(`_(bucket|sum|count)$`).ReplaceAllString(name, "")
		if _, ok := after["# TYPE "+family]; !ok {
			if _, ok := after["# TYPE "+name]; !ok {
				t.Errorf("the dashboard shows %s, which the gateway does not serve", name)
			}
		}
	}
	if strings.Contains(log.String(), "slow request") {
		t.Errorf("requests logged as slow with the slow-request log off:\n%s", log)
	}
}

func TestSlowQuery(t *testing.T) {
	s, log := metricsGateway(t, func(c *gateway.Config) { c.SlowQuery = time.Nanosecond })
	sess := sessionOn(t, s, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS slowlog WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS slowlog.t (k int PRIMARY KEY, v text)")
	const secret = "bound-value-never-logged"
	// Answered from the shard pools' goroutines: a one-row write and a
	// read from the one replica.
	if err := sess.Query("INSERT INTO slowlog.t (k, v) VALUES (?, ?)", 1, secret).Exec(); err != nil {
		t.Fatal(err)
	}
	var v string
	if err := sess.Query("SELECT v FROM slowlog.t WHERE k = ?", 1).Scan(&v); err != nil || v != secret {
		t.Fatalf("SELECT: %q, %v", v, err)
	}
	// Answered by a handler: a batch.
	b := sess.NewBatch(gocql.UnloggedBatch)
	b.Query("INSERT INTO slowlog.t (k, v) VALUES (?, ?)", 2, secret)
	b.Query("DELETE FROM slowlog.t WHERE k = ?", 3)
	if err := sess.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}

	out := log.String()
	for _, want := range []string{
		`opcode=EXECUTE kind=insert keyspace=slowlog cql="INSERT INTO slowlog.t (k, v) VALUES (?, ?)"`,
		`opcode=EXECUTE kind=select keyspace=slowlog cql="SELECT v FROM slowlog.t WHERE k = ?"`,
		`opcode=BATCH kind=batch keyspace="" cql="INSERT INTO slowlog.t (k, v) VALUES (?, ?); DELETE FROM slowlog.t WHERE k = ?"`,
	} {
		line := lineWith(out, want)
		if line == "" {
			t.Errorf("no slow-request line with %s in:\n%s", want, out)
			continue
		}
		if !strings.Contains(line, "level=WARN") || !strings.Contains(line, `msg="slow request"`) ||
			!strings.Contains(line, " duration=") || !strings.Contains(line, " client=127.0.0.1:") {
			t.Errorf("slow-request line lacks its level, message, duration or client:\n%s", line)
		}
	}
	if strings.Contains(out, secret) {
		t.Errorf("the slow-request log shows a bound value:\n%s", out)
	}
}

// lineWith returns the first line of text containing s.
func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestMetricsShardDown checks the metrics of a shard that goes down and
// comes back: its ops fail, it is down, hints for it are pending, and
// once it is back they are replayed.
func TestMetricsShardDown(t *testing.T) {
	fc := startFailureClusterWith(t, func(c *gateway.Config) { c.HTTP = "127.0.0.1:0" })
	s := fc.gw
	sess := sessionOn(t, s, "")
	sess.SetConsistency(gocql.One)
	exec(t, sess, "CREATE KEYSPACE down WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE down.t (k int PRIMARY KEY, v int)")

	const shard = `{shard="shard2"}`
	before := scrape(t, s)
	if err := fc.clusters[2].Kill(); err != nil {
		t.Fatal(err)
	}
	const n = 10
	for i := range n {
		if err := sess.Query("INSERT INTO down.t (k, v) VALUES (?, ?)", i, i).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(what string, ok func(series) bool) series {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			m := scrape(t, s)
			if ok(m) {
				return m
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after 30 s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	down := waitFor("hints pending for the killed shard", func(m series) bool {
		return m["cqlpg_hints_pending"+shard] >= n
	})
	if v := down.has(t, "cqlpg_shard_up"+shard); v != 0 {
		t.Errorf("cqlpg_shard_up %v for the killed shard", v)
	}
	grew(t, before, down, "cqlpg_shard_op_errors_total"+shard, 1)
	if v := down["cqlpg_hints_pending{shard=\"shard0\"}"] + down["cqlpg_hints_pending{shard=\"shard1\"}"]; v != 0 {
		t.Errorf("%v hints pending for the shards that are up", v)
	}

	if err := fc.clusters[2].Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor("hints replayed once the shard is back", func(m series) bool {
		return m["cqlpg_shard_up"+shard] == 1 && m["cqlpg_hints_pending"+shard] == 0
	})
}
