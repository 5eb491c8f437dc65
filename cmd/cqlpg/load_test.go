package main_test

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/cmd/cqlpg/internal/bulk"
	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/pgschema/cqltext"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// bulkEnv is two shards, a gateway on them and a bulk.Cluster for loads.
type bulkEnv struct {
	urls  []string
	args  []string // --shard flags
	sess  *gocql.Session
	addr  string
	bulk  *bulk.Cluster
	close func()
}

var (
	bulkOnce sync.Once
	bulkE    *bulkEnv
	bulkErr  error
)

// sharedBulkEnv starts the shards and the gateway once for the load,
// unload and exec tests.
func sharedBulkEnv(t testing.TB) *bulkEnv {
	t.Helper()
	bulkOnce.Do(func() { bulkE, bulkErr = startBulkEnv() })
	if bulkErr != nil {
		t.Fatal(bulkErr)
	}
	return bulkE
}

func startBulkEnv() (*bulkEnv, error) {
	ctx := context.Background()
	clusters, stop, err := localpg.TempClusters(ctx, 2, localpg.Options{})
	if err != nil {
		return nil, fmt.Errorf("start PostgreSQL: %w", err)
	}
	e := &bulkEnv{}
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, c := range clusters {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: c.URL()})
		e.urls = append(e.urls, c.URL())
		e.args = append(e.args, "--shard", c.URL())
	}
	srv, err := gateway.New(ctx, cfg)
	if err != nil {
		stop()
		return nil, err
	}
	go srv.Serve()
	e.addr = srv.Addr().String()
	host, port, _ := net.SplitHostPort(e.addr)
	cc := gocql.NewCluster(host)
	cc.Port, _ = strconv.Atoi(port)
	cc.Timeout = 20 * time.Second
	e.sess, err = cc.CreateSession()
	if err != nil {
		srv.Shutdown(ctx)
		stop()
		return nil, err
	}
	e.close = func() { e.sess.Close(); srv.Shutdown(context.Background()); stop() }
	return e, nil
}

// reopen reads the schema again, after the test created tables.
func (e *bulkEnv) reopen(t testing.TB) *bulk.Cluster {
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
	c, err := bulk.Open(ctx, gc.Topology().Ring, e.urls)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (e *bulkEnv) exec(t *testing.T, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if err := e.sess.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bulkE != nil {
		bulkE.close()
	}
	os.Exit(code)
}

// rawValue binds a value's CQL bytes as they are.
type rawValue []byte

func (r rawValue) MarshalCQL(gocql.TypeInfo) ([]byte, error) { return r, nil }

// allTypesColumns is a table of every CQL type, with a static column, a
// clustering column with an order key, DESC, and a case-sensitive name.
const allTypesColumns = `(k int, c text, c2 timeuuid, s text static, a ascii, bi bigint, bl blob, bo boolean,
	da date, de decimal, db double, du duration, fl float, ip inet, i int, si smallint, ti tinyint,
	ts timestamp, tm time, u uuid, vi varint, l list<text>, se set<int>, m map<text, int>,
	fl2 frozen<list<int>>, tu tuple<int, text>, ud frozen<addr>, ud2 addr, ve vector<float, 3>, "Mixed" text,
	PRIMARY KEY (k, c, c2)) WITH CLUSTERING ORDER BY (c ASC, c2 DESC)`

var allTypesHeader = []string{"k", "c", "c2", "s", "a", "bi", "bl", "bo", "da", "de", "db", "du", "fl", "ip", "i", "si",
	"ti", "ts", "tm", "u", "vi", "l", "se", "m", "fl2", "tu", "ud", "ud2", "ve", "Mixed"}

// allTypesRow returns row i's fields, in cqlsh's forms, nil for null.
func allTypesRow(i int) []*string {
	s := func(v string) *string { return &v }
	texts := []string{"plain", "comma, inside", `say "hi"`, "two\nlines", "", "it's", " padded "}
	row := []*string{
		s(strconv.Itoa(i % 37)), s(fmt.Sprintf("c%d %s", i%5, texts[i%len(texts)])),
		s(fmt.Sprintf("%08x-c9bf-11ee-8c90-0242ac120002", i%3)), s(texts[(i%37)%len(texts)]), // one static value per partition
		s("ascii"), s(strconv.Itoa(i * 1000003)), s(fmt.Sprintf("0x%04x", i)), s([]string{"True", "False"}[i%2]),
		s("2024-01-02"), s("1.50"), s("0.1"), s("1h2m"), s("1.5"), s("10.0.0.1"), s(strconv.Itoa(-i)),
		s("7"), s("-8"), s("2024-01-02 03:04:05.678000+0000"), s("03:04:05.000000001"),
		s("41d01b63-244e-435d-bd6d-5dc8a0addb8c"), s("123456789012345678901234567890"),
		s("['a', 'b''c', 'x, y']"), s("{1, 2, 3}"), s("{'k': 1, 'l': 2}"), s("[1, 2]"), s("(1, 'x')"),
		s(`{street: 'Main St', zip: 12345}`), s(`{street: 'Side, "St"', zip: null}`), s("[1.0, 2.0, 3.0]"), s(texts[i%len(texts)]),
	}
	// Nulls: a different regular column in each row, every regular
	// column in some row.
	if i%3 == 0 {
		row[4+i%(len(row)-4)] = nil
	}
	if (i%37)%11 == 0 {
		row[3] = nil
	}
	return row
}

// writeCSV writes the header and rows as cqlsh's COPY TO does: a field
// is quoted when it needs it, or to write the empty string.
func writeCSV(t *testing.T, path string, header []string, rows [][]*string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(strings.Join(header, ",") + "\n")
	for _, r := range rows {
		for j, f := range r {
			if j > 0 {
				b.WriteByte(',')
			}
			switch {
			case f == nil:
			case *f == "" || strings.ContainsAny(*f, ",\"\n") || strings.HasPrefix(*f, " "):
				b.WriteString(`"` + strings.ReplaceAll(*f, `"`, `""`) + `"`)
			default:
				b.WriteString(*f)
			}
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// insertRows writes rows through the gateway, each an INSERT of every
// column at timestamp ts, values bound as their CQL bytes.
func insertRows(t *testing.T, e *bulkEnv, c *bulk.Cluster, table string, header []string, rows [][]*string, ts int64) {
	t.Helper()
	tbl := c.Schema.Table("bl", table)
	names := make([]string, len(header))
	marks := make([]string, len(header))
	for i, h := range header {
		names[i] = pgschema.QuoteIdentifier(h)
		marks[i] = "?"
	}
	for _, r := range rows {
		if r[1] == nil {
			// A static-only row names the partition and static columns.
			if err := e.sess.Query(fmt.Sprintf("INSERT INTO bl.%s (k, s) VALUES (?, ?) USING TIMESTAMP %d", table, ts),
				rawValue(mustParse(t, tbl.Column("k").Type, *r[0])), rawValue([]byte(*r[3]))).Exec(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		// gocql 1.7 counts a tuple's elements as bind markers: tuples
		// go into the statement as literals, which their text is.
		var args []any
		for j, f := range r {
			typ := tbl.Column(header[j]).Type
			switch {
			case typ.Kind == pgschema.Tuple && f == nil:
				marks[j] = "null"
			case typ.Kind == pgschema.Tuple:
				marks[j] = *f
			case f == nil:
				marks[j] = "?"
				args = append(args, rawValue(nil))
			default:
				marks[j] = "?"
				v, err := cqltext.Parse(typ, *f)
				if err != nil {
					t.Fatalf("%s = %q: %v", header[j], *f, err)
				}
				args = append(args, rawValue(v))
			}
		}
		q := fmt.Sprintf("INSERT INTO bl.%s (%s) VALUES (%s) USING TIMESTAMP %d", table, strings.Join(names, ", "), strings.Join(marks, ", "), ts)
		if err := e.sess.Query(q, args...).Exec(); err != nil {
			t.Fatalf("insert: %v", err)
		}
	}
}

func mustParse(t *testing.T, typ *pgschema.Type, s string) []byte {
	t.Helper()
	v, err := cqltext.Parse(typ, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// shardRows returns a table's stored rows on one shard, every internal
// column included, as text.
func shardRows(t *testing.T, url, table string) []string {
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

func selectAll(t *testing.T, e *bulkEnv, table string) []map[string]any {
	t.Helper()
	// gocql 1.7 cannot read vectors: every other column.
	cols := strings.Join(slices.DeleteFunc(slices.Clone(allTypesHeader), func(c string) bool { return c == "ve" }), ", ")
	cols = strings.Replace(cols, "Mixed", `"Mixed"`, 1)
	rows, err := e.sess.Query("SELECT " + cols + " FROM bl." + table).Iter().SliceMap()
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(rows, func(i, j int) bool { return fmt.Sprint(rows[i]) < fmt.Sprint(rows[j]) })
	return rows
}

// TestLoadEqualsInserts loads a file of every type into one table and
// INSERTs the same rows through the gateway into another at the same
// timestamp: both replicas of both tables hold exactly the same stored
// rows, internal columns included, and gocql reads the same rows back.
// A partition deleted after the timestamp stays deleted in both.
func TestLoadEqualsInserts(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	e.exec(t, "CREATE KEYSPACE IF NOT EXISTS bl WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TYPE IF NOT EXISTS bl.addr (street text, zip int)",
		"CREATE TABLE bl.ins "+allTypesColumns, "CREATE TABLE bl.ld "+allTypesColumns)
	const ts = 1700000000000000
	e.exec(t, fmt.Sprintf("DELETE FROM bl.ins USING TIMESTAMP %d WHERE k = 5", ts+1),
		fmt.Sprintf("DELETE FROM bl.ld USING TIMESTAMP %d WHERE k = 5", ts+1))
	var rows [][]*string
	for i := range 300 {
		rows = append(rows, allTypesRow(i))
	}
	// A static-only row: the partition key and static column alone.
	static := make([]*string, len(allTypesHeader))
	k, sv := "1000", "static only"
	static[0], static[3] = &k, &sv
	rows = append(rows, static)
	c := e.reopen(t)
	insertRows(t, e, c, "ins", allTypesHeader, rows, ts)
	file := filepath.Join(t.TempDir(), "rows.csv")
	writeCSV(t, file, allTypesHeader, rows)

	stdout, stderr, code := runCqlpg(bin, append(append([]string{"load"}, e.args...), "--timestamp", strconv.Itoa(ts), "--batch-rows", "64", "bl.ld", file)...)
	if code != 0 {
		t.Fatalf("cqlpg load: exit %d\n%s%s", code, stdout, stderr)
	}
	if !regexp.MustCompile(`^loaded 301 rows into bl\.ld at timestamp 1700000000000000 in .+\n$`).MatchString(stdout) {
		t.Errorf("load summary: %q", stdout)
	}
	if !regexp.MustCompile(`(?m)^301 rows, \d+ rows/s, 100\.0% of .+$`).MatchString(stderr) {
		t.Errorf("load progress: %q", stderr)
	}
	if _, err := os.Stat(file + ".progress"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the progress file is left after a complete load: %v", err)
	}
	for _, u := range e.urls {
		for _, part := range []string{"%s", `"%s$static"`, `"%s$deletions"`} {
			ins := shardRows(t, u, "bl."+fmt.Sprintf(part, "ins"))
			ld := shardRows(t, u, "bl."+fmt.Sprintf(part, "ld"))
			if len(ins) == 0 {
				t.Errorf("%s: no rows", part)
			}
			if !slices.Equal(ins, ld) {
				t.Errorf("%s on %s: loaded rows differ from inserted ones (%d against %d)", part, u, len(ld), len(ins))
				for i := range min(len(ins), len(ld)) {
					if ins[i] != ld[i] {
						t.Errorf("first difference:\ninserted %s\nloaded   %s", ins[i], ld[i])
						break
					}
				}
			}
		}
	}
	// RF=2 on two shards: every partition on both.
	if a, b := shardRows(t, e.urls[0], "bl.ld"), shardRows(t, e.urls[1], "bl.ld"); !slices.Equal(a, b) || len(a) < 250 {
		t.Errorf("the replicas differ: %d and %d rows", len(a), len(b))
	}
	got, want := selectAll(t, e, "ld"), selectAll(t, e, "ins")
	if len(got) < 250 || !reflect.DeepEqual(got, want) {
		t.Errorf("gocql reads %d loaded rows, %d inserted ones, or they differ", len(got), len(want))
	}
}

// readCSV parses a CSV file into sorted records, header first.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	body := recs[1:]
	sort.Slice(body, func(i, j int) bool { return strings.Join(body[i], "\x00") < strings.Join(body[j], "\x00") })
	return recs
}

// TestUnloadLoadRoundTrip unloads a table of every type, loads the file
// into an empty table, and unloads that: the files hold the same rows,
// which are the rows written, and gocql reads the same rows from both.
func TestUnloadLoadRoundTrip(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	e.exec(t, "CREATE KEYSPACE IF NOT EXISTS bl WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TYPE IF NOT EXISTS bl.addr (street text, zip int)",
		"CREATE TABLE bl.src "+allTypesColumns, "CREATE TABLE bl.dst "+allTypesColumns)
	var rows [][]*string
	for i := range 200 {
		rows = append(rows, allTypesRow(i))
	}
	c := e.reopen(t)
	insertRows(t, e, c, "src", allTypesHeader, rows, 1700000000000000)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "src.csv"), filepath.Join(dir, "dst.csv")
	run := func(args ...string) string {
		stdout, stderr, code := runCqlpg(bin, append(append([]string{args[0]}, e.args...), args[1:]...)...)
		if code != 0 {
			t.Fatalf("cqlpg %v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		return stdout + stderr
	}
	out := run("unload", "bl.src", first)
	if !strings.Contains(out, "unloaded 200 rows of bl.src") || !strings.Contains(out, "200 rows, ") || !strings.Contains(out, "token ranges 32/32") {
		t.Errorf("unload output:\n%s", out)
	}
	run("load", "bl.dst", first)
	run("unload", "bl.dst", second)
	a, b := readCSV(t, first), readCSV(t, second)
	if len(a) != 201 || !reflect.DeepEqual(a, b) {
		t.Errorf("the unloaded files differ (%d and %d records)", len(a), len(b))
	}
	// SELECT * order: keys, then the others sorted by name.
	if strings.Join(a[0], ",") != "k,c,c2,s,Mixed,a,bi,bl,bo,da,db,de,du,fl,fl2,i,ip,l,m,se,si,ti,tm,ts,tu,u,ud,ud2,ve,vi" {
		t.Errorf("header %v", a[0])
	}
	pos := map[string]int{}
	for i, h := range allTypesHeader {
		pos[h] = i
	}
	// The file holds the values written, in the forms they were given.
	want := map[string]bool{}
	for _, r := range rows {
		var rec []string
		for _, f := range r {
			if f == nil {
				rec = append(rec, "")
			} else {
				rec = append(rec, *f)
			}
		}
		want[strings.Join(rec, "\x00")] = true
	}
	for _, r := range a[1:] {
		rec := make([]string, len(r))
		for i, h := range a[0] {
			rec[pos[h]] = r[i]
		}
		if !want[strings.Join(rec, "\x00")] {
			t.Errorf("unloaded row not written: %q", r)
			break
		}
	}
	if got, want := selectAll(t, e, "dst"), selectAll(t, e, "src"); len(got) != 200 || !reflect.DeepEqual(got, want) {
		t.Errorf("gocql reads %d rows from the loaded table, %d from the source, or they differ", len(got), len(want))
	}
}

// TestLoadResume interrupts a load after two batches and starts it
// again: it continues from the progress file, with the same timestamp,
// and the table ends with exactly the file's rows.
func TestLoadResume(t *testing.T) {
	e := sharedBulkEnv(t)
	e.exec(t, "CREATE KEYSPACE IF NOT EXISTS bl WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE bl.resume (k int, c int, v text, PRIMARY KEY (k, c))")
	c := e.reopen(t)
	dir := t.TempDir()
	file, state := filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.state")
	var rows [][]*string
	for i := range 1000 {
		k, cc, v := strconv.Itoa(i/10), strconv.Itoa(i%10), fmt.Sprintf("row %d,\n\"x\"", i)
		rows = append(rows, []*string{&k, &cc, &v})
	}
	writeCSV(t, file, []string{"k", "c", "v"}, rows)
	ctx, cancel := context.WithCancel(context.Background())
	res, err := c.Load(ctx, "bl", "resume", file, bulk.LoadOptions{BatchRows: 100, State: state,
		AfterBatch: func(n int) {
			if n == 2 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) || res.Rows != 200 {
		t.Fatalf("interrupted load: %d rows, %v", res.Rows, err)
	}
	if _, err := os.Stat(state); err != nil {
		t.Fatalf("no progress file after the interruption: %v", err)
	}
	var n int
	if err := e.sess.Query("SELECT count(*) FROM bl.resume").Scan(&n); err != nil || n != 200 {
		t.Fatalf("after the interruption: %d rows, %v", n, err)
	}
	var resumedAt int64
	res2, err := c.Load(context.Background(), "bl", "resume", file, bulk.LoadOptions{BatchRows: 100, State: state,
		Progress: func(p bulk.LoadProgress) {
			if p.Resumed && resumedAt == 0 {
				resumedAt = p.Rows
			}
		}})
	if err != nil || !res2.Resumed || res2.Rows != 1000 || resumedAt != 200 || res2.Timestamp != res.Timestamp {
		t.Fatalf("resumed load: %+v (first %+v), resumed at %d, %v", res2, res, resumedAt, err)
	}
	if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the progress file is left after the load: %v", err)
	}
	got := map[string]bool{}
	iter := e.sess.Query("SELECT k, c, v, WRITETIME(v) FROM bl.resume").Iter()
	var k, cc int
	var v string
	var wt int64
	for iter.Scan(&k, &cc, &v, &wt) {
		if wt != res.Timestamp {
			t.Errorf("row %d/%d has write time %d, want %d", k, cc, wt, res.Timestamp)
		}
		got[fmt.Sprint(k, cc, v)] = true
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if !got[fmt.Sprint(i/10, i%10, fmt.Sprintf("row %d,\n\"x\"", i))] {
			t.Fatalf("row %d missing", i)
		}
	}
	if len(got) != 1000 {
		t.Errorf("%d rows, want 1000", len(got))
	}
	for _, u := range e.urls {
		if n := len(shardRows(t, u, "bl.resume")); n != 1000 {
			t.Errorf("%d rows on a replica, want 1000", n)
		}
	}
}

// TestLoadHostileCSV refuses files that do not fit the table, naming the
// line and the column.
func TestLoadHostileCSV(t *testing.T) {
	e := sharedBulkEnv(t)
	e.exec(t, "CREATE KEYSPACE IF NOT EXISTS bl WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE bl.hostile (k int, c int, v int, w text, PRIMARY KEY (k, c))")
	c := e.reopen(t)
	dir := t.TempDir()
	for _, tc := range []struct{ name, csv, want string }{
		{"bad value", "k,c,v\n1,1,1\n2,2,abc\n", `line 3, column v: invalid int "abc"`},
		{"wrong count", "k,c,v\n1,1,1\n2,2\n", "line 3: 2 fields where the header has 3"},
		{"unknown column", "k,c,zz\n1,1,1\n", `line 1: column "zz" of the header is not a column of bl.hostile`},
		{"missing key", "k,v\n1,1\n", "line 1: the header has no column c, which is part of the primary key"},
		{"null key", "k,c,v\n1,,1\n", "line 2, column c: null value in a clustering column"},
		{"out of range", "k,c,v\n1,1,99999999999\n", "line 2, column v: 99999999999 is out of range for int"},
		{"unclosed quote", "k,c,w\n1,1,\"abc\n", "line 2: quoted field not closed before the end of the file"},
		{"quoted newline then bad", "k,c,w\n1,1,\"a\nb\"\nx,1,a\n", `line 4, column k: invalid int "x"`},
		{"empty", "", "the file is empty"},
	} {
		file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".csv")
		if err := os.WriteFile(file, []byte(tc.csv), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := c.Load(context.Background(), "bl", "hostile", file, bulk.LoadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	_, err := c.Load(context.Background(), "bl", "nope", filepath.Join(dir, "x.csv"), bulk.LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "table bl.nope does not exist") {
		t.Errorf("missing table: %v", err)
	}
}
