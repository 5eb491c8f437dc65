package bulk

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/pgschema/cqltext"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// shardEnv is two shards, a gateway on them and a session to it.
type shardEnv struct {
	urls []string
	sess *gocql.Session
}

// startShards starts the shards and the gateway for one test, which
// stops them when it ends.
func startShards(t *testing.T) *shardEnv {
	t.Helper()
	ctx := context.Background()
	clusters, stop, err := localpg.TempClusters(ctx, 2, localpg.Options{Settings: localpg.FastSettings})
	if err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	t.Cleanup(stop)
	e := &shardEnv{}
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, c := range clusters {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: c.URL()})
		e.urls = append(e.urls, c.URL())
	}
	srv, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	host, port, _ := net.SplitHostPort(srv.Addr().String())
	cc := gocql.NewCluster(host)
	cc.Port, _ = strconv.Atoi(port)
	cc.Timeout = 20 * time.Second
	if e.sess, err = cc.CreateSession(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.sess.Close)
	return e
}

// exec runs CQL statements through the gateway.
func (e *shardEnv) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if err := e.sess.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// cluster opens the shards for loads, reading the schema as it is now.
func (e *shardEnv) cluster(t *testing.T) *Cluster {
	t.Helper()
	ctx := context.Background()
	cfg := gateway.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, u := range e.urls {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
	}
	gc, err := gateway.OpenCluster(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer gc.Close()
	c, err := Open(ctx, gc.Topology().Ring, e.urls)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// rawValue binds a value's CQL bytes as they are.
type rawValue []byte

func (r rawValue) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return r, nil }

// insertCSV writes a CSV file's rows through the gateway into table, each
// an INSERT of its columns at timestamp ts; a row with no clustering
// value names the partition key and static column alone, as a load
// writes it.
func (e *shardEnv) insertCSV(t *testing.T, c *Cluster, table, file string, ts int64) {
	t.Helper()
	tab := c.Schema.Table("bx", table)
	lines := strings.Split(strings.TrimSpace(file), "\n")
	header := strings.Split(lines[0], ",")
	for _, line := range lines[1:] {
		fields := strings.Split(line, ",")
		staticOnly := fields[slices.Index(header, "c")] == ""
		var names, marks []string
		var args []any
		for i, f := range fields {
			col := tab.Column(header[i])
			if staticOnly && col.Kind != pgschema.PartitionKey && col.Kind != pgschema.Static {
				continue
			}
			var v []byte
			if f != "" {
				text := strings.Trim(f, `"`)
				var err error
				if v, err = cqltext.Parse(col.Type, text); err != nil {
					t.Fatalf("%s = %q: %v", col.Name, text, err)
				}
			}
			names, marks, args = append(names, col.Name), append(marks, "?"), append(args, rawValue(v))
		}
		q := fmt.Sprintf("INSERT INTO bx.%s (%s) VALUES (%s) USING TIMESTAMP %d", table,
			strings.Join(names, ", "), strings.Join(marks, ", "), ts)
		if err := e.sess.Query(q, args...).Exec(); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
}

// storedRows returns a Postgres table's rows on one shard, every internal
// column included, as text.
func storedRows(t *testing.T, url, table string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, fmt.Sprintf("SELECT x::text FROM %s AS x ORDER BY 1", table))
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLoadUnloadExact loads dates and decimals Postgres cannot hold
// exactly, as key (partition and clustering), static and regular cells,
// in two files at one timestamp whose ties the greater value wins: both
// replicas hold exactly the rows the same INSERTs through the gateway
// store (placeholders, exact companions, order keys), the unload prints
// the values as cqlsh does, in clustering order, and loading that file
// into an empty table and unloading it gives the same file.
func TestLoadUnloadExact(t *testing.T) {
	e := startShards(t)
	const columns = `(k date, c date, s decimal static, v decimal, d date, PRIMARY KEY (k, c))
		WITH CLUSTERING ORDER BY (c DESC)`
	e.exec(t, "CREATE KEYSPACE bx WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE bx.ld "+columns, "CREATE TABLE bx.ins "+columns, "CREATE TABLE bx.rt "+columns)
	c := e.cluster(t)
	first := `k,c,s,v,d
2024-01-02,-5877641-06-23,1E+3,1E+1000000,+5881580-07-11
2024-01-02,1970-01-01,1E+3,1E-20000,2024-01-01
2024-01-02,+5881580-07-11,1E+3,-1.5E+10,-4713-11-23
2024-01-02,-4713-11-23,1E+3,1.50,
-5877641-06-23,2024-01-01,-1E+1000000,1000,2024-01-01
-5877641-06-23,2024-01-02,-1E+1000000,1E+3,+5881580-07-11
+5881580-07-11,,0.5,,
`
	// The same cells again: 1E+3 beats 1000, equal to Postgres's numeric,
	// and a date beyond Postgres's beats one within it.
	second := `k,c,v,d
-5877641-06-23,2024-01-01,1E+3,+5881580-07-11
-5877641-06-23,2024-01-02,1000,2024-01-01
2024-01-02,1970-01-01,1E+1000000,-5877641-06-23
`
	const ts = 1700000000000000
	dir := t.TempDir()
	for i, file := range []string{first, second} {
		path := filepath.Join(dir, fmt.Sprintf("in%d.csv", i))
		if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Load(context.Background(), "bx", "ld", path, LoadOptions{Timestamp: ts, BatchRows: 3}); err != nil {
			t.Fatalf("load %d: %v", i, err)
		}
		e.insertCSV(t, c, "ins", file, ts)
	}
	for _, u := range e.urls {
		for _, part := range []string{"%s", `"%s$static"`} {
			ins, ld := storedRows(t, u, "bx."+fmt.Sprintf(part, "ins")), storedRows(t, u, "bx."+fmt.Sprintf(part, "ld"))
			if len(ins) == 0 || !slices.Equal(ins, ld) {
				t.Errorf("%s on %s: loaded rows differ from inserted ones\ninserted %q\nloaded   %q", part, u, ins, ld)
			}
		}
	}
	unload := func(table string) string {
		var b bytes.Buffer
		if _, err := c.Unload(context.Background(), "bx", table, &b, nil); err != nil {
			t.Fatalf("unload %s: %v", table, err)
		}
		return b.String()
	}
	out := unload("ld")
	if ins := unload("ins"); out != ins {
		t.Errorf("the loaded table unloads as\n%s\nthe inserted one as\n%s", out, ins)
	}
	want := []string{
		"k,c,s,d,v",
		"2024-01-02,2147483647,1E+3,-2440589,-1.5E+10",
		"2024-01-02,1970-01-01,1E+3,2024-01-01,1E+1000000",
		"2024-01-02,-2440589,1E+3,,1.50",
		"2024-01-02,-2147483648,1E+3,2147483647,1E+1000000",
		"-2147483648,2024-01-02,-1E+1000000,2147483647,1E+3",
		"-2147483648,2024-01-01,-1E+1000000,2147483647,1E+3",
		"2147483647,,0.5,,",
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	// Each partition's rows come together, in clustering order.
	partitions := map[string][]string{}
	for _, l := range append(want[1:], lines[1:]...) {
		k := strings.SplitN(l, ",", 2)[0]
		partitions[k] = append(partitions[k], l)
	}
	for k, rows := range partitions {
		if n := len(rows) / 2; len(rows)%2 != 0 || !slices.Equal(rows[:n], rows[n:]) {
			t.Errorf("partition %s unloads as %q", k, rows)
		}
	}
	if len(lines) != len(want) || lines[0] != want[0] {
		t.Errorf("unloaded\n%s\nwant the rows\n%s", out, strings.Join(want, "\n"))
	}
	// Loading the unloaded file stores the same rows again.
	path := filepath.Join(dir, "out.csv")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(context.Background(), "bx", "rt", path, LoadOptions{Timestamp: ts}); err != nil {
		t.Fatalf("load the unloaded file: %v", err)
	}
	if again := unload("rt"); again != out {
		t.Errorf("the reloaded table unloads as\n%s\nwant\n%s", again, out)
	}
	for _, u := range e.urls {
		for _, part := range []string{"%s", `"%s$static"`} {
			ld, rt := storedRows(t, u, "bx."+fmt.Sprintf(part, "ld")), storedRows(t, u, "bx."+fmt.Sprintf(part, "rt"))
			if !slices.Equal(ld, rt) {
				t.Errorf("%s on %s: reloaded rows differ\nloaded   %q\nreloaded %q", part, u, ld, rt)
			}
		}
	}
}

// TestLoadLongKeys loads keys longer than their table's key limit (a text
// partition key and a blob clustering column of thousands of bytes, and a
// frozen list key whose order key is that long): the loader stores the
// stand-ins, exact companions and cut order keys the same INSERTs through
// the gateway store, and unloads the keys whole.
func TestLoadLongKeys(t *testing.T) {
	e := startShards(t)
	const columns = `(k text, c blob, l frozen<list<text>>, v int, PRIMARY KEY (k, c, l))`
	e.exec(t, "CREATE KEYSPACE bx WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE bx.ld "+columns, "CREATE TABLE bx.ins "+columns)
	c := e.cluster(t)
	text := func(n, seed int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + (i*7919+seed*104729+i*i*31)%26)
		}
		return string(b)
	}
	blob := func(n, seed int) string {
		var b strings.Builder
		b.WriteString("0x")
		for i := range n {
			fmt.Fprintf(&b, "%02x", byte(i*131+seed*17+i*i*7))
		}
		return b.String()
	}
	file := "k,c,l,v\n" +
		text(5000, 1) + "," + blob(3000, 1) + `,"['` + text(4000, 2) + `']",1` + "\n" +
		text(5000, 1) + "," + blob(3000, 2) + `,"['a']",2` + "\n" +
		"short,0x01,\"['b']\",3\n"
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	const ts = 1700000000000000
	if _, err := c.Load(context.Background(), "bx", "ld", path, LoadOptions{Timestamp: ts}); err != nil {
		t.Fatalf("load: %v", err)
	}
	e.insertCSV(t, c, "ins", file, ts)
	for _, u := range e.urls {
		ins, ld := storedRows(t, u, "bx.ins"), storedRows(t, u, "bx.ld")
		if len(ins) == 0 || !slices.Equal(ins, ld) {
			t.Errorf("on %s: loaded rows differ from inserted ones (%d and %d rows)", u, len(ins), len(ld))
		}
	}
	var out bytes.Buffer
	if _, err := c.Unload(context.Background(), "bx", "ld", &out, nil); err != nil {
		t.Fatalf("unload: %v", err)
	}
	for _, want := range []string{text(5000, 1), blob(3000, 1)[2:], blob(3000, 2)[2:], text(4000, 2)} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the unloaded file lacks a key of %d characters", len(want))
		}
	}
}
