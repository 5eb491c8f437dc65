package main_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
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
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// migrateTarget is a fresh one-shard cqlpg cluster placed in datacenter
// east, with a gateway on it for the checks.
type migrateTarget struct {
	shard string // --shard flag value
	url   string
	addr  string
}

func startMigrateTarget(t testing.TB) *migrateTarget {
	t.Helper()
	ctx := context.Background()
	clusters, stop, err := localpg.TempClusters(ctx, 1, localpg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	m := &migrateTarget{shard: "east:r1=" + clusters[0].URL(), url: clusters[0].URL()}
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Shards: []cluster.ShardConfig{{Datacenter: "east", Rack: "r1", URL: clusters[0].URL()}}}
	srv, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	m.addr = srv.Addr().String()
	return m
}

// describe returns DESCRIBE KEYSPACE ks as cqlpg exec prints it.
func describe(t *testing.T, bin, addr, ks string) string {
	t.Helper()
	out, errOut, code := runExec(t, bin, "--host", addr, "-e", "DESCRIBE KEYSPACE "+ks)
	if code != 0 {
		t.Fatalf("DESCRIBE KEYSPACE %s on %s: exit %d, %s", ks, addr, code, errOut)
	}
	return out
}

// TestMigrateSchema imports a keyspace of types that use one another,
// tables with compound keys, descending clustering, static, collection
// and quoted columns, options and indexes from a live cluster (another
// cqlpg), and checks that the target describes it as the origin does,
// with its datacenter mapped; then that every refusal comes before any
// write.
func TestMigrateSchema(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	e.exec(t,
		"CREATE KEYSPACE IF NOT EXISTS migsrc WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 1}",
		"CREATE TYPE IF NOT EXISTS migsrc.phone (kind text, number text)",
		"CREATE TYPE IF NOT EXISTS migsrc.contact (name text, phones frozen<list<frozen<phone>>>)",
		`CREATE TABLE IF NOT EXISTS migsrc.events (tenant int, day date, at timestamp, id uuid, "Kind" text, payload blob,
			tags set<text>, attrs map<text, int>, who frozen<contact>, seen list<timestamp>, owner text STATIC,
			PRIMARY KEY ((tenant, day), at, id))
			WITH CLUSTERING ORDER BY (at DESC, id ASC) AND default_time_to_live = 3600 AND gc_grace_seconds = 7200
			AND comment = 'it''s events'`,
		"CREATE TABLE IF NOT EXISTS migsrc.users (id uuid PRIMARY KEY, email text, age int)",
		"CREATE INDEX IF NOT EXISTS users_email ON migsrc.users (email)",
		"CREATE OR REPLACE FUNCTION migsrc.avgstate(state tuple<int, bigint>, val int) CALLED ON NULL INPUT RETURNS tuple<int, bigint> "+
			"LANGUAGE java AS 'if (val != null) { state.setInt(0, state.getInt(0) + 1); state.setLong(1, state.getLong(1) + val); } return state;'",
		"CREATE OR REPLACE FUNCTION migsrc.avgfinal(state tuple<int, bigint>) CALLED ON NULL INPUT RETURNS double LANGUAGE java AS "+
			"$$if (state.getInt(0) == 0) return null; return (double) state.getLong(1) / state.getInt(0);$$",
		"CREATE OR REPLACE AGGREGATE migsrc.average(int) SFUNC avgstate STYPE tuple<int, bigint> FINALFUNC avgfinal INITCOND (0, 0)",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS migsrc.users_by_age AS SELECT id, age FROM migsrc.users "+
			"WHERE age IS NOT NULL AND id IS NOT NULL PRIMARY KEY (age, id) WITH CLUSTERING ORDER BY (id DESC) AND comment = 'by age'",
		"CREATE INDEX IF NOT EXISTS ON migsrc.events (keys(attrs))",
		// Cassandra 5.0's: a vector with its storage-attached index, and one
		// on text with options.
		"CREATE TABLE IF NOT EXISTS migsrc.docs (id int PRIMARY KEY, title text, embedding vector<float, 3>)",
		"CREATE INDEX IF NOT EXISTS docs_embedding ON migsrc.docs (embedding) USING 'sai' WITH OPTIONS = {'similarity_function': 'euclidean'}",
		"CREATE CUSTOM INDEX IF NOT EXISTS docs_title ON migsrc.docs (title) USING 'StorageAttachedIndex' WITH OPTIONS = {'case_sensitive': 'false'}",
		"CREATE KEYSPACE IF NOT EXISTS migsrc2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS migsrc2.t (k int PRIMARY KEY, v int)",
		"CREATE TABLE IF NOT EXISTS migsrc2.u (k int PRIMARY KEY, v int)",
	)
	dst := startMigrateTarget(t)
	migrate := func(args ...string) (string, string, int) {
		return runCqlpg(bin, append([]string{"migrate", "schema", "--origin", e.addr, "--shard", dst.shard}, args...)...)
	}

	// The origin's datacenter is not the target's.
	out, errOut, code := migrate("--keyspaces", "migsrc")
	if code != 1 || !strings.Contains(errOut, "keyspace migsrc is replicated to datacenter datacenter1, which the target does not have "+
		"(its datacenters: east): map it with --dc-map datacenter1=DATACENTER") || !strings.Contains(errOut, "nothing was created") {
		t.Errorf("unmapped datacenter: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = migrate("--keyspaces", "migsrc", "--dc-map", "datacenter1=west,dc9=east")
	if code != 1 || !strings.Contains(errOut, "--dc-map datacenter1=west: the target has no datacenter west (its datacenters: east)") ||
		!strings.Contains(errOut, "--dc-map dc9=east: the origin has no datacenter dc9 (its datacenters: datacenter1)") {
		t.Errorf("unknown datacenters: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Unreachable, or refusing the login.
	out, errOut, code = runCqlpg(bin, "migrate", "schema", "--origin", "127.0.0.1:1", "--origin-timeout", "1s", "--shard", dst.shard)
	if code != 1 || !strings.Contains(errOut, "origin: cannot connect to 127.0.0.1:1") {
		t.Errorf("unreachable origin: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// An origin that requires a login, a cluster of its own (a second
	// gateway on the shared shards would confuse the tests' driver
	// sessions, which tell nodes apart by address): refused with the
	// wrong password or none, read with the right one.
	ctx := context.Background()
	authPG, stopAuthPG, err := localpg.TempClusters(ctx, 1, localpg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer stopAuthPG()
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Auth:   gateway.AuthConfig{Enabled: true, SuperuserPassword: "cassandra"},
		Shards: []cluster.ShardConfig{{URL: authPG[0].URL()}}}
	authed, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go authed.Serve()
	defer authed.Shutdown(context.Background())
	for _, tc := range []struct {
		auth, want string
		code       int
	}{
		{"cassandra:wrong", "origin: cannot connect to " + authed.Addr().String(), 1},
		{"", "origin: cannot connect to " + authed.Addr().String(), 1},
		{"cassandra:cassandra", "", 0},
	} {
		out, errOut, code := runCqlpg(bin, "migrate", "schema", "--origin", authed.Addr().String(), "--origin-auth", tc.auth,
			"--dry-run", "--shard", dst.shard)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("--origin-auth %q: exit %d, stdout %q, stderr %q", tc.auth, code, out, errOut)
		}
	}
	if out, _, code := runExec(t, bin, "--host", dst.addr, "-e", "DESCRIBE KEYSPACE migsrc"); code == 0 {
		t.Fatalf("refused imports created migsrc:\n%s", out)
	}

	out, errOut, code = migrate("--keyspaces", "migsrc", "--dc-map", "datacenter1=east")
	if code != 0 {
		t.Fatalf("import: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, want := range []string{"created keyspace migsrc\ncreated type migsrc.phone\ncreated type migsrc.contact\n",
		"created table migsrc.events\n", "created index migsrc.events_attrs_idx\n", "created index migsrc.users_email\n",
		"created materialized view migsrc.users_by_age\n", "created function migsrc.avgstate(frozen<tuple<int, bigint>>, int)\n",
		"created aggregate migsrc.average(int)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	want := strings.ReplaceAll(describe(t, bin, e.addr, "migsrc"), "'datacenter1': '1'", "'east': '1'")
	if got := describe(t, bin, dst.addr, "migsrc"); got != want {
		t.Errorf("target describes\n%s\norigin (datacenter mapped)\n%s", got, want)
	}
	// Again: everything is there already.
	out, errOut, code = migrate("--keyspaces", "migsrc", "--dc-map", "datacenter1=east")
	if code != 0 || strings.Contains(out, "created") || !strings.Contains(out, "table migsrc.events exists on the target with the same columns and keys") {
		t.Errorf("second import: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// A table on both sides with other columns stops the whole import.
	if out, errOut, code := runExec(t, bin, "--host", dst.addr, "-e",
		"CREATE KEYSPACE migsrc2 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}; "+
			"CREATE TABLE migsrc2.t (k int PRIMARY KEY, v text)"); code != 0 {
		t.Fatalf("target table: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code = migrate("--keyspaces", "migsrc2")
	if code != 1 || !strings.Contains(errOut, "table migsrc2.t exists on the target with other columns or keys "+
		"(origin has v int; target has v text): drop it on the target, or leave keyspace migsrc2 out of --keyspaces") {
		t.Errorf("conflicting table: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if got := describe(t, bin, dst.addr, "migsrc2"); strings.Contains(got, "migsrc2.u") {
		t.Errorf("a refused import created migsrc2.u:\n%s", got)
	}
}

// copyCheck is what a copy must carry of a row: every cell's value, write
// time and TTL.
const copyCheck = "SELECT k, c, v, WRITETIME(v), TTL(v), n, WRITETIME(n), s, WRITETIME(s), tags FROM %s"

// snapshot reads copyCheck from addr, one line a row, TTLs rounded to a
// minute (the two reads are seconds apart), in key order.
func snapshot(t *testing.T, addr, table string) []string {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cc := gocql.NewCluster(host)
	cc.Port, _ = strconv.Atoi(port)
	cc.DisableInitialHostLookup = true
	cc.Timeout = 20 * time.Second
	s, err := cc.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	iter := s.Query(fmt.Sprintf(copyCheck, table)).PageSize(5000).Iter()
	var out []string
	for {
		var k, c int
		var v, st *string
		var vwt, nwt, swt, n *int64
		var ttl *int
		var tags []string
		if !iter.Scan(&k, &c, &v, &vwt, &ttl, &n, &nwt, &st, &swt, &tags) {
			break
		}
		if ttl != nil {
			*ttl = (*ttl + 30) / 60
		}
		out = append(out, strings.TrimSpace(fmt.Sprintln(k, c, deref(v), deref(vwt), deref(ttl), deref(n), deref(nwt), deref(st), deref(swt), tags)))
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func deref[T any](p *T) any {
	if p == nil {
		return "null"
	}
	return *p
}

// TestMigrateCopy copies tables of rows written at many times, some
// with TTLs, static cells, sets and rows of keys alone, and checks that
// the target holds every cell with its value, write time and TTL; then
// kills a throttled copy halfway and checks that the copy started again
// ends with exactly the origin's rows.
func TestMigrateCopy(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	e.exec(t, "CREATE KEYSPACE IF NOT EXISTS migcopy WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	for _, tbl := range []string{"t", "slow"} {
		e.exec(t, "CREATE TABLE IF NOT EXISTS migcopy."+tbl+` (k int, c int, v text, n bigint, s text STATIC, tags set<text>,
			PRIMARY KEY (k, c))`)
	}
	e.exec(t, "CREATE TABLE IF NOT EXISTS migcopy.hits (k int PRIMARY KEY, n counter)",
		"UPDATE migcopy.hits SET n = n + 3 WHERE k = 1")
	writeCopyRows(t, e, "migcopy.t", 3000)
	// A partition of static cells alone, and one more row: 3001 in all.
	e.exec(t, "INSERT INTO migcopy.t (k, s) VALUES (9999, 'only') USING TIMESTAMP 1650000000000000")
	writeCopyRows(t, e, "migcopy.slow", 2000)
	dst := startMigrateTarget(t)
	base := []string{"--origin", e.addr, "--shard", dst.shard}

	// Before the schema: refused, naming what to do.
	out, errOut, code := runCqlpg(bin, append([]string{"migrate", "copy", "migcopy.t"}, base...)...)
	if code != 1 || !strings.Contains(errOut, "table migcopy.t does not exist on the target: create it first (cqlpg migrate schema)") {
		t.Fatalf("copy before the schema: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out, errOut, code := runCqlpg(bin, append([]string{"migrate", "schema", "--keyspaces", "migcopy"}, base...)...); code != 0 {
		t.Fatalf("schema: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// A counter table, with no dual writes running: copied as values,
	// and copied again, still the origin's values.
	e.exec(t, "UPDATE migcopy.hits SET n = n - 10 WHERE k = 2")
	for run := range 2 {
		out, errOut, code = runCqlpg(bin, append([]string{"migrate", "copy", "migcopy.hits"}, base...)...)
		if code != 0 || !strings.HasPrefix(out, "copied 2 rows of migcopy.hits") {
			t.Fatalf("copy %d of a counter table: exit %d, stdout %q, stderr %q", run+1, code, out, errOut)
		}
		d := proxySession(t, dst.addr, true)
		for k, want := range map[int]int64{1: 3, 2: -10} {
			var n int64
			if err := d.Query("SELECT n FROM migcopy.hits WHERE k = ?", k).Scan(&n); err != nil || n != want {
				t.Errorf("copy %d: counter %d on the target is %d (%v), want %d", run+1, k, n, err, want)
			}
		}
	}
	out, errOut, code = runCqlpg(bin, append([]string{"migrate", "diff", "migcopy.hits", "--splits", "8"}, base...)...)
	if code != 0 || out != "migcopy.hits: 2 rows compared, 0 missing, 0 extra, 0 differ\n" {
		t.Errorf("diff of a counter table: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// Writes the application made on both sides meanwhile: the newer
	// cell wins, whichever lands first. Row (0, 1) has v written at
	// ...001000 on the origin; the target gets a newer v for it, an older
	// one for row (0, 6), and a newer one in row (0, 2) for the origin to
	// get too, as a dual write would.
	if out, errOut, code := runExec(t, bin, "--host", dst.addr, "-e",
		"UPDATE migcopy.t USING TIMESTAMP 1800000000000000 SET v = 'newer' WHERE k = 0 AND c = 1; "+
			"UPDATE migcopy.t USING TIMESTAMP 1600000000000000 SET v = 'older' WHERE k = 0 AND c = 6; "+
			"UPDATE migcopy.t USING TIMESTAMP 1800000000000000 SET v = 'dual' WHERE k = 0 AND c = 2"); code != 0 {
		t.Fatalf("target writes: exit %d, %q %q", code, out, errOut)
	}
	e.exec(t, "UPDATE migcopy.t USING TIMESTAMP 1800000000000000 SET v = 'dual' WHERE k = 0 AND c = 2")
	out, errOut, code = runCqlpg(bin, append([]string{"migrate", "copy", "migcopy.t", "--parallel", "3", "--splits", "16"}, base...)...)
	if code != 0 || !strings.HasPrefix(out, "copied 3001 rows of migcopy.t") {
		t.Fatalf("copy: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	got := snapshot(t, dst.addr, "migcopy.t")
	if !strings.HasPrefix(got[1], "0 1 newer 1800000000000000 ") {
		t.Errorf("the copy overwrote a newer cell: %s", got[1])
	}
	e.exec(t, "UPDATE migcopy.t USING TIMESTAMP 1800000000000000 SET v = 'newer' WHERE k = 0 AND c = 1")
	want, got := snapshot(t, e.addr, "migcopy.t"), snapshot(t, dst.addr, "migcopy.t")
	if len(want) != 3001 || !slices.Equal(got, want) {
		t.Errorf("target rows differ from the origin's: %d and %d rows", len(got), len(want))
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("first difference:\ntarget %s\norigin %s", got[i], want[i])
			}
		}
	}

	// A throttled copy killed halfway, then started again.
	state := filepath.Join(t.TempDir(), "copy.state")
	args := append([]string{"migrate", "copy", "migcopy.slow", "--splits", "32", "--parallel", "2", "--page-size", "50",
		"--rate", "1500", "--resume", state}, base...)
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(state)
		if n := strings.Count(string(b), "true"); n >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	b, err := os.ReadFile(state)
	if err != nil || strings.Count(string(b), "true") < 4 || strings.Count(string(b), "false") == 0 {
		t.Fatalf("the copy was not killed halfway: state %s, %v", b, err)
	}
	out, errOut, code = runCqlpg(bin, args...)
	if code != 0 || !strings.HasPrefix(out, "copied 2000 rows of migcopy.slow") || !strings.Contains(errOut, "migcopy.slow: resuming with ") {
		t.Fatalf("resumed copy: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if want, got := snapshot(t, e.addr, "migcopy.slow"), snapshot(t, dst.addr, "migcopy.slow"); len(want) != 2000 || !slices.Equal(got, want) {
		t.Errorf("resumed copy: target rows differ from the origin's (%d and %d rows)", len(got), len(want))
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("the state file outlived the copy: %v", err)
	}
}

// writeCopyRows writes rows to table (k, c, v, n, s static, tags) at
// many write times: rows of keys alone, cells with TTLs, empty text,
// sets, statics, and cells at the gateway's clock.
func writeCopyRows(t *testing.T, e *bulkEnv, table string, rows int) {
	b := e.sess.NewBatch(gocql.UnloggedBatch)
	for i := range rows {
		k, c, ts := i/10, i%10, int64(1_700_000_000_000_000+i*1000)
		switch i % 5 {
		case 0:
			b.Query("INSERT INTO "+table+" (k, c) VALUES (?, ?) USING TIMESTAMP ?", k, c, ts)
		case 1:
			b.Query("INSERT INTO "+table+" (k, c, v, n) VALUES (?, ?, ?, ?) USING TIMESTAMP ? AND TTL 86400",
				k, c, fmt.Sprint("v", i), int64(i)<<40, ts)
		case 2:
			b.Query("UPDATE "+table+" USING TIMESTAMP ? SET v = ?, tags = ? WHERE k = ? AND c = ?",
				ts, "it's "+fmt.Sprint(i), []string{"a", fmt.Sprint(i)}, k, c)
			b.Query("UPDATE "+table+" USING TIMESTAMP ? SET n = ? WHERE k = ? AND c = ?", ts+7, int64(-i), k, c)
		case 3:
			b.Query("INSERT INTO "+table+" (k, c, v, s) VALUES (?, ?, ?, ?) USING TIMESTAMP ?", k, c, "", fmt.Sprint("s", k), ts)
		case 4:
			b.Query("INSERT INTO "+table+" (k, c, n) VALUES (?, ?, ?) USING TTL 7200", k, c, int64(i))
		}
		if b.Size() >= 50 {
			if err := e.sess.ExecuteBatch(b); err != nil {
				t.Fatal(err)
			}
			b = e.sess.NewBatch(gocql.UnloggedBatch)
		}
	}
	if err := e.sess.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
}

// TestMigrateDiff damages 100 copied rows on the target through SQL (50
// values changed, 50 rows deleted), and checks that migrate diff finds
// exactly those, that --fix repairs them, and that a row only the target
// holds is reported and left alone.
func TestMigrateDiff(t *testing.T) {
	e := sharedBulkEnv(t)
	bin := buildCqlpg(t)
	e.exec(t, "CREATE KEYSPACE IF NOT EXISTS migdiff WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS migdiff.t (k int, c int, v text, n bigint, s text STATIC, tags set<text>, PRIMARY KEY (k, c))")
	writeCopyRows(t, e, "migdiff.t", 3000)
	dst := startMigrateTarget(t)
	base := []string{"--origin", e.addr, "--shard", dst.shard}
	run := func(args ...string) (string, string, int) {
		return runCqlpg(bin, append(append([]string{"migrate"}, args...), base...)...)
	}
	if out, errOut, code := run("schema", "--keyspaces", "migdiff"); code != 0 {
		t.Fatalf("schema: exit %d, %q %q", code, out, errOut)
	}
	if out, errOut, code := run("copy", "migdiff"); code != 0 {
		t.Fatalf("copy: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code := run("diff", "migdiff.t", "--splits", "32")
	if code != 0 || out != "migdiff.t: 3000 rows compared, 0 missing, 0 extra, 0 differ\n" {
		t.Fatalf("diff after the copy: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// Damage through SQL, triggers off so that the write times stay
	// older than the origin's: rows with v (i % 5 is 1, 2 or 3) get
	// another value, rows of keys alone (i % 5 == 0) are deleted.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dst.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var want []string
	for i := range 100 {
		row := 5*i + 1 + i%3 // a row with v
		verb := "differs"
		q := `UPDATE migdiff.t SET v = 'damaged', "v$wt" = "v$wt" - 1 WHERE k = $1 AND c = $2`
		if i%2 == 1 {
			row, verb, q = 5*i, "missing", "DELETE FROM migdiff.t WHERE k = $1 AND c = $2"
		}
		k, c := row/10, row%10
		if _, err := conn.Exec(ctx, "SET session_replication_role = replica"); err != nil {
			t.Fatal(err)
		}
		if tag, err := conn.Exec(ctx, q, k, c); err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("%s (%d, %d): %v, %v", q, k, c, tag, err)
		}
		want = append(want, fmt.Sprintf("%-7s migdiff.t k = %d, c = %d", verb, k, c))
	}
	slices.Sort(want)
	lines := func(out string) []string {
		var l []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasPrefix(line, "migdiff.t:") {
				l = append(l, line)
			}
		}
		slices.Sort(l)
		return l
	}
	out, errOut, code = run("diff", "migdiff.t", "--splits", "32")
	if got := lines(out); code != 3 || !slices.Equal(got, want) ||
		!strings.Contains(out, "migdiff.t: 3000 rows compared, 50 missing, 0 extra, 50 differ\n") {
		t.Fatalf("diff of the damage: exit %d, stderr %q, got %d lines:\n%s\nwant %d:\n%s", code, errOut,
			len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	out, errOut, code = run("diff", "migdiff.t", "--fix")
	if code != 3 || !strings.Contains(out, "migdiff.t: 3000 rows compared, 50 missing, 0 extra, 50 differ; 100 fixed\n") {
		t.Fatalf("diff --fix: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if w, g := snapshot(t, e.addr, "migdiff.t"), snapshot(t, dst.addr, "migdiff.t"); !slices.Equal(g, w) {
		t.Errorf("after --fix the target's rows differ from the origin's (%d and %d rows)", len(g), len(w))
	}
	// Names fold to lower case unless quoted, as in CQL.
	out, errOut, code = run("diff", `MigDiff."t"`)
	if code != 0 || out != "migdiff.t: 3000 rows compared, 0 missing, 0 extra, 0 differ\n" {
		t.Fatalf("diff after --fix: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// A row only the target holds.
	if out, errOut, code := runExec(t, bin, "--host", dst.addr, "-e", "INSERT INTO migdiff.t (k, c, v) VALUES (-1, -1, 'mine')"); code != 0 {
		t.Fatalf("insert: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code = run("diff", "migdiff.t", "--fix")
	if code != 3 || out != "extra   migdiff.t k = -1, c = -1\nmigdiff.t: 3000 rows compared, 0 missing, 1 extra, 0 differ; 0 fixed\n" {
		t.Fatalf("diff of an extra row: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if g := snapshot(t, dst.addr, "migdiff.t"); len(g) != 3001 {
		t.Errorf("--fix touched the extra row: %d rows", len(g))
	}
}
