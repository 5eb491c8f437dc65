package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/repair"
)

// sweepGateway starts a gateway of its own on the shared shards, whose
// sweeper has the given settings. A gateway reads the schema when it
// starts, so tests create their tables first.
func sweepGateway(t testing.TB, sc repair.SweepConfig, httpAddr string) *gateway.Server {
	t.Helper()
	cfg := gateway.Config{Listen: "127.0.0.1:0", HTTP: httpAddr, Log: testLogger(), Sweep: sc}
	for _, u := range shardURLs {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: u})
	}
	s, err := gateway.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// sweep runs one pass and fails the test if a shard reports an error.
func sweep(t testing.TB, s *gateway.Server) []repair.SweepStats {
	t.Helper()
	stats := s.Sweep(context.Background())
	for _, st := range stats {
		if st.Err != nil {
			t.Fatalf("sweep: %v", st)
		}
	}
	return stats
}

// wholePasses lets a pass sweep every table the package's tests leave.
var wholePasses = repair.SweepConfig{PassBatches: 1 << 20}

// waitExpiry waits until cells written with TTL 1 have expired and a
// gc_grace_seconds of 0 has passed for them.
func waitExpiry() { time.Sleep(2100 * time.Millisecond) }

func TestSweeperExpiresAndPurges(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE sweep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE sweep.t (k int PRIMARY KEY, v int, w int, e int) WITH gc_grace_seconds = 0",
		"CREATE TABLE sweep.keep (k int PRIMARY KEY, v int)",
		"INSERT INTO sweep.t (k, v) VALUES (1, 1) USING TTL 1",
		"UPDATE sweep.t USING TTL 1 SET v = 2 WHERE k = 2",
		"INSERT INTO sweep.t (k, v) VALUES (3, 3)",
		"UPDATE sweep.t USING TTL 1 SET w = 3 WHERE k = 3",
		"UPDATE sweep.t USING TTL 1 SET v = 4 WHERE k = 4",
		"UPDATE sweep.t SET w = 4 WHERE k = 4",
		"UPDATE sweep.t USING TTL 1 SET v = 5 WHERE k = 5",
		"UPDATE sweep.t SET v = 50 WHERE k = 5",
		"INSERT INTO sweep.t (k, v) VALUES (6, 6) USING TTL 1000",
		"DELETE FROM sweep.t WHERE k = 7",
		"INSERT INTO sweep.keep (k, v) VALUES (1, 1) USING TTL 1")
	if err := sess.Query("UPDATE sweep.t USING TTL 1 SET e = ? WHERE k = 3", rawValue{}).Exec(); err != nil {
		t.Fatal(err)
	}
	s := sweepGateway(t, wholePasses, "")
	if got := pgQuery(t, `SELECT concat_ws(' ', k, "e$empty") FROM sweep.t ORDER BY k`); !slices.Equal(got,
		[]string{"1", "2", "3 t", "4", "5", "6", "7"}) {
		t.Fatalf("rows before sweeping: %q", got)
	}
	waitExpiry()
	before := readText(t, sess.Query("SELECT * FROM sweep.t"))
	stats := sweep(t, s)
	if st := stats[0]; st.RowsPurged < 3 || st.CellsExpired < 3 {
		t.Errorf("first shard's pass: %v", st)
	}
	// Every table the package's tests made so far is swept without error.
	for _, st := range stats {
		if st.Skipped != 0 || !st.Finished {
			t.Errorf("pass skipped tables: %v", st)
		}
	}
	if after := readText(t, sess.Query("SELECT * FROM sweep.t")); !slices.Equal(before.rows, after.rows) {
		t.Errorf("reads changed by sweeping:\n got %q\nwant %q", after.rows, before.rows)
	}
	// Rows 1 and 2 expired whole and 7 was a deletion: gone. Row 3 keeps v
	// and tombstones for w and the empty e; row 4 keeps w and a tombstone
	// for v; rows 5 and 6 were newer or not yet expired, and stay as they
	// were.
	cells := `concat_ws(' ', k, coalesce(v::text, 'null'), "v$wt" IS NOT NULL, coalesce("v$exp" > 0, false),
		coalesce(w::text, 'null'), "w$wt" IS NOT NULL, "w$exp" IS NULL,
		coalesce(e::text, 'null'), coalesce("e$empty"::text, 'null'), "e$wt" IS NOT NULL, "e$exp" IS NULL,
		"_row_wt" IS NOT NULL, coalesce("_row_exp" > 0, false))`
	if got, want := pgQuery(t, "SELECT "+cells+" FROM sweep.t ORDER BY k"), []string{
		"3 3 t f null t t null null t t t f",
		"4 null t f 4 t t null null f t f f",
		"5 50 t f null f t null null f t f f",
		"6 6 t t null f t null null f t t t",
	}; !slices.Equal(got, want) {
		t.Errorf("rows after sweeping:\n got %q\nwant %q", got, want)
	}
	// Within gc_grace_seconds the expired cell becomes a tombstone but the
	// row, and its expired marker, stay.
	if got := pgQuery(t, `SELECT concat_ws(' ', k, coalesce(v::text, 'null'), "v$wt" IS NOT NULL, "v$exp" IS NULL,
		"_row_wt" IS NOT NULL, "_row_exp" IS NOT NULL) FROM sweep.keep`); !slices.Equal(got, []string{"1 null t t t t"}) {
		t.Errorf("row within gc_grace_seconds: %q", got)
	}
	if n := len(readText(t, sess.Query("SELECT * FROM sweep.keep")).rows); n != 0 {
		t.Errorf("expired row read back: %d rows", n)
	}
	// A second pass finds nothing more to do on these tables.
	sweep(t, s)
	if got := pgQuery(t, "SELECT count(*)::text FROM sweep.t"); !slices.Equal(got, []string{"4"}) {
		t.Errorf("rows after a second pass: %v", got)
	}
}

func TestSweeperRowMarker(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE IF NOT EXISTS sweep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE sweep.marker (k int PRIMARY KEY, v int) WITH gc_grace_seconds = 0",
		// An INSERTed row outlives its TTL'd cell: the marker has none.
		"INSERT INTO sweep.marker (k) VALUES (1)",
		"UPDATE sweep.marker USING TTL 1 SET v = 1 WHERE k = 1",
		// A row whose marker expires lives on by a cell written later.
		"INSERT INTO sweep.marker (k, v) VALUES (2, 2) USING TTL 1",
		"UPDATE sweep.marker SET v = 20 WHERE k = 2",
		"INSERT INTO sweep.marker (k, v) VALUES (3, 3) USING TTL 1")
	s := sweepGateway(t, wholePasses, "")
	waitExpiry()
	sweep(t, s)
	wantRows(t, sess.Query("SELECT k, v FROM sweep.marker"), "", "1 | null", "2 | 20")
	if got, want := pgQuery(t, `SELECT concat_ws(' ', k, coalesce(v::text, 'null'), "v$wt" IS NOT NULL,
		"_row_wt" IS NOT NULL, "_row_exp" IS NOT NULL) FROM sweep.marker ORDER BY k`),
		[]string{"1 null t t f", "2 20 t f f"}; !slices.Equal(got, want) {
		t.Errorf("rows after sweeping:\n got %q\nwant %q", got, want)
	}
}

func TestSweeperStatic(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE IF NOT EXISTS sweep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE sweep.st (k int, c int, s int STATIC, s2 int STATIC, v int, PRIMARY KEY (k, c)) WITH gc_grace_seconds = 0",
		"UPDATE sweep.st USING TTL 1 SET s = 1 WHERE k = 1",
		"INSERT INTO sweep.st (k, c, v) VALUES (1, 1, 1)",
		"UPDATE sweep.st USING TTL 1 SET s = 2 WHERE k = 2",
		"UPDATE sweep.st SET s2 = 2 WHERE k = 2",
		"UPDATE sweep.st USING TTL 1000 SET s = 3 WHERE k = 3",
		"INSERT INTO sweep.st (k, c, v) VALUES (4, 1, 4)",
		"UPDATE sweep.st SET s = 4 WHERE k = 4",
		"DELETE FROM sweep.st WHERE k = 4",
		"DELETE FROM sweep.st WHERE k = 5 AND c > 1")
	s := sweepGateway(t, wholePasses, "")
	if got := pgQuery(t, `SELECT count(*)::text FROM sweep."st$deletions"`); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("deletions recorded: %v", got)
	}
	waitExpiry()
	before := readText(t, sess.Query("SELECT * FROM sweep.st"))
	sweep(t, s)
	if after := readText(t, sess.Query("SELECT * FROM sweep.st")); !slices.Equal(before.rows, after.rows) {
		t.Errorf("reads changed by sweeping:\n got %q\nwant %q", after.rows, before.rows)
	}
	// Partition 1's static row held only an expired cell, and partition
	// 4's only a deletion: gone. Partition 2 keeps s2 and a tombstone for s.
	if got, want := pgQuery(t, `SELECT concat_ws(' ', k, coalesce(s::text, 'null'), "s$wt" IS NOT NULL,
		"s$exp" IS NOT NULL, coalesce(s2::text, 'null')) FROM sweep."st$static" ORDER BY k`),
		[]string{"2 null t f 2", "3 3 t t null"}; !slices.Equal(got, want) {
		t.Errorf("static rows after sweeping:\n got %q\nwant %q", got, want)
	}
	if got := pgQuery(t, "SELECT concat_ws(' ', k, c, v) FROM sweep.st ORDER BY k"); !slices.Equal(got, []string{"1 1 1"}) {
		t.Errorf("rows after sweeping: %q", got)
	}
	if got := pgQuery(t, `SELECT count(*)::text FROM sweep."st$deletions"`); !slices.Equal(got, []string{"0"}) {
		t.Errorf("deletions after sweeping: %v", got)
	}
}

// TestSweeperBounded checks that a pass does no more than its budget:
// BatchRows rows per statement and PassBatches statements per shard, and
// that later passes take up where it stopped.
func TestSweeperBounded(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE IF NOT EXISTS sweep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE sweep.bounded (k int PRIMARY KEY, v int) WITH gc_grace_seconds = 0")
	const rows, batchRows, passBatches = 300, 10, 3
	for k := range rows {
		if err := sess.Query("INSERT INTO sweep.bounded (k, v) VALUES (?, ?) USING TTL 1", k, k).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	s := sweepGateway(t, repair.SweepConfig{BatchRows: batchRows, PassBatches: passBatches}, "")
	waitExpiry()
	count := func() int {
		n, _ := strconv.Atoi(pgQuery(t, "SELECT count(*)::text FROM sweep.bounded")[0])
		return n
	}
	// Passes also go through the tables other tests left, a few
	// statements at a time, and resume where the last one stopped.
	passes := 0
	for n := rows; n > 0; passes++ {
		if passes == 2000 {
			t.Fatalf("%d rows left after %d passes", n, passes)
		}
		for _, st := range sweep(t, s) {
			if st.Batches > passBatches || st.RowsPurged > batchRows*passBatches {
				t.Fatalf("pass %d did more than its budget: %v", passes, st)
			}
		}
		last := n
		if n = count(); n < last-batchRows*passBatches {
			t.Fatalf("pass %d left %d rows of %d", passes, n, last)
		}
	}
	if passes < rows/(batchRows*passBatches) {
		t.Errorf("%d rows purged in %d passes of at most %d", rows, passes, batchRows*passBatches)
	}
}

// TestSweeperConcurrentWrites sweeps expired rows while they are written
// again: no write may be lost.
func TestSweeperConcurrentWrites(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE IF NOT EXISTS sweep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE sweep.race (k int PRIMARY KEY, v int, w int) WITH gc_grace_seconds = 0")
	const rows = 300
	for k := range rows {
		if err := sess.Query("UPDATE sweep.race USING TTL 1 SET v = ?, w = ? WHERE k = ?", k, k, k).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	s := sweepGateway(t, repair.SweepConfig{BatchRows: 7, PassBatches: 5, BatchBlocks: 1}, "")
	waitExpiry()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				s.Sweep(context.Background())
			}
		}
	})
	for k := range rows {
		if err := sess.Query("UPDATE sweep.race SET v = ? WHERE k = ?", 10*k, k).Exec(); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
	// Rows written before they were swept still hold the expired w.
	for i := 0; pgQuery(t, `SELECT count(*)::text FROM sweep.race WHERE "w$exp" IS NOT NULL`)[0] != "0"; i++ {
		if i == 2000 {
			t.Fatal("expired cells left")
		}
		sweep(t, s)
	}
	got := readText(t, sess.Query("SELECT v, w FROM sweep.race"))
	if len(got.rows) != rows {
		t.Fatalf("%d rows read back, want %d", len(got.rows), rows)
	}
	want := map[string]bool{}
	for k := range rows {
		want[fmt.Sprintf("%d | null", 10*k)] = true
	}
	for _, r := range got.rows {
		if !want[r] {
			t.Fatalf("row %q read back", r)
		}
	}
	if got := pgQuery(t, `SELECT count(*)::text FROM sweep.race WHERE v = 10 * k AND w IS NULL AND "w$exp" IS NULL`); !slices.Equal(got, []string{strconv.Itoa(rows)}) {
		t.Errorf("rows written and swept on the first shard: %v, want %d", got, rows)
	}
}

// TestSweeperSkips checks that a pass changes nothing on a shard whose
// schema is not the one the gateway knows, and skips a table whose
// Postgres table is gone, as when it is dropped during the pass.
func TestSweeperSkips(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		// The keyspace sorts first, so that a pass starts with its table.
		`CREATE KEYSPACE "0sweep" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE "0sweep".first (k int PRIMARY KEY, v int) WITH gc_grace_seconds = 0`,
		`INSERT INTO "0sweep".first (k, v) VALUES (1, 1) USING TTL 1`,
		"CREATE KEYSPACE IF NOT EXISTS sweep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE sweep.gone (k int PRIMARY KEY, v int) WITH gc_grace_seconds = 0",
		"CREATE TABLE sweep.later (k int PRIMARY KEY, v int) WITH gc_grace_seconds = 0",
		"INSERT INTO sweep.later (k, v) VALUES (1, 1) USING TTL 1")
	t.Cleanup(func() { exec(t, sess, "DROP TABLE IF EXISTS sweep.gone") })
	s := sweepGateway(t, wholePasses, "")
	waitExpiry()
	count := func(table string) string { return pgQuery(t, "SELECT count(*)::text FROM "+table)[0] }

	conn, err := pgx.Connect(context.Background(), shardURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var version string
	if err := conn.QueryRow(context.Background(), "SELECT version::text FROM cqlpg.schema_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(context.Background(), "UPDATE cqlpg.schema_version SET version = gen_random_uuid()"); err != nil {
		t.Fatal(err)
	}
	st := s.Sweep(context.Background())[0]
	if _, err := conn.Exec(context.Background(), "UPDATE cqlpg.schema_version SET version = $1::uuid", version); err != nil {
		t.Fatal(err)
	}
	if st.Err != nil || st.Skipped != 1 || st.Finished || st.RowsPurged != 0 {
		t.Errorf("pass on a shard with another schema: %v", st)
	}
	if n := count(`"0sweep".first`); n != "1" {
		t.Errorf("%s rows left by a pass on a shard with another schema, want 1", n)
	}

	// Set as the gateway's own DDL sets it, past the guard against DDL
	// run outside cqlpg (migration 0012).
	if _, err := conn.Exec(context.Background(), "SET cqlpg.ddl = 'on'; DROP TABLE sweep.gone"); err != nil {
		t.Fatal(err)
	}
	st = sweep(t, s)[0]
	if st.Skipped != 1 || !st.Finished {
		t.Errorf("pass with a dropped table: %v", st)
	}
	if n, m := count(`"0sweep".first`), count("sweep.later"); n != "0" || m != "0" {
		t.Errorf("rows left by a pass with a dropped table: %s and %s, want none", n, m)
	}
}

// TestSweeperBackground checks that a gateway sweeps by itself every
// interval and counts what it did in its metrics.
func TestSweeperBackground(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE IF NOT EXISTS sweep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE sweep.background (k int PRIMARY KEY, v int) WITH gc_grace_seconds = 0",
		"INSERT INTO sweep.background (k, v) VALUES (1, 1) USING TTL 1")
	s := sweepGateway(t, repair.SweepConfig{Interval: 100 * time.Millisecond, PassBatches: 1 << 20}, "127.0.0.1:0")
	deadline := time.Now().Add(15 * time.Second)
	for pgQuery(t, "SELECT count(*)::text FROM sweep.background")[0] != "0" {
		if time.Now().After(deadline) {
			t.Fatal("the expired row is still there")
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The pass is counted when it ends on the shard.
	want := []string{`cqlpg_sweep_rows_purged_total\{shard="shard0"\} [1-9]`,
		`cqlpg_sweep_pass_seconds_count\{shard="shard0"\} [1-9]`, `cqlpg_sweep_batches_total\{shard="shard0"\} [1-9]`}
	for {
		resp, err := http.Get("http://" + s.HTTPAddr().String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		missing := slices.DeleteFunc(slices.Clone(want), func(re string) bool { return regexp.MustCompile(re).Match(body) })
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics lack %q:\n%s", missing, grepLines(string(body), "cqlpg_sweep"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// BenchmarkSweep measures how fast a pass with the default limits purges
// rows that hold only expired cells, and tombstones expired cells in rows
// that stay, on one shard.
func BenchmarkSweep(b *testing.B) {
	sess := session(b, "")
	exec(b, sess,
		"CREATE KEYSPACE IF NOT EXISTS sweep_bench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS sweep_bench.t (k int PRIMARY KEY, v int, w int) WITH gc_grace_seconds = 0")
	s := sweepGateway(b, repair.SweepConfig{PassBatches: 1 << 20}, "")
	conn, err := pgx.Connect(context.Background(), shardURLs[0])
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	const rows = 100_000
	for _, bc := range []struct{ name, fill string }{
		{"purge", `INSERT INTO sweep_bench.t (_token, k, v, "v$wt", "v$exp") SELECT i, i, i, 1, 1 FROM generate_series(1, $1) i`},
		{"expire", `INSERT INTO sweep_bench.t (_token, k, v, "v$wt", "v$exp", w, "w$wt") SELECT i, i, i, 1, 1, i, 1 FROM generate_series(1, $1) i`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				if _, err := conn.Exec(context.Background(), "TRUNCATE sweep_bench.t"); err != nil {
					b.Fatal(err)
				}
				if _, err := conn.Exec(context.Background(), bc.fill, rows); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for !sweep(b, s)[0].Finished {
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestSweeperExact: sweeping an expired date or decimal cell clears its
// exact companion with it, and leaves a live one's alone.
func TestSweeperExact(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE sweepx WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE sweepx.t (k int PRIMARY KEY, x decimal, d date) WITH gc_grace_seconds = 0",
		"INSERT INTO sweepx.t (k, x, d) VALUES (1, 1E+1000000, '+5881580-07-11')",
		"UPDATE sweepx.t USING TTL 1 SET x = 2E+1000000, d = '-5877641-06-23' WHERE k = 1",
		"INSERT INTO sweepx.t (k, x, d) VALUES (2, 3E+1000000, '+5881580-07-11')")
	s := sweepGateway(t, wholePasses, "")
	waitExpiry()
	sweep(t, s)
	if got, want := pgQuery(t, `SELECT concat_ws(' ', k, coalesce(x::text, 'null'), "x$exact" IS NOT NULL,
		coalesce(d::text, 'null'), "d$exact" IS NOT NULL) FROM sweepx.t ORDER BY k`),
		[]string{"1 null f null f", "2 Infinity t infinity t"}; !slices.Equal(got, want) {
		t.Errorf("rows after sweeping:\n got %q\nwant %q", got, want)
	}
	wantRows(t, sess.Query("SELECT k, toJson(x), toJson(d) FROM sweepx.t"), "k int, system.tojson(x) varchar, system.tojson(d) varchar",
		"1 | null | null", `2 | 3E+1000000 | "+5881580-07-11"`)
}

// TestSweeperPurgesBallots checks that a pass drops the partitions' Paxos
// state past its expiry, and keeps the rest: without it, one row per
// partition ever written conditionally or read at SERIAL stays forever. A
// conditional write's state expires max(BallotLifetime, gc_grace_seconds)
// after its ballot, as Cassandra's does.
func TestSweeperPurgesBallots(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, shardURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS px WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE IF NOT EXISTS px.t (k int PRIMARY KEY, v int) WITH gc_grace_seconds = 86400")
	// At ALL, the commit is on every replica when the insert is answered.
	if ok, err := sess.Query("INSERT INTO px.t (k, v) VALUES (1, 1) IF NOT EXISTS").Consistency(gocql.All).ScanCAS(); err != nil || !ok {
		t.Fatalf("conditional insert: applied %v, %v", ok, err)
	}
	var lifetime time.Duration
	if err := conn.QueryRow(ctx, `SELECT ((expires - committed) || ' microseconds')::interval FROM cqlpg.paxos p
		JOIN cqlpg.tables t ON t.id = p.table_id WHERE t.keyspace_name = 'px' AND t.table_name = 't'`).Scan(&lifetime); err != nil {
		t.Fatal(err)
	}
	if lifetime != 24*time.Hour {
		t.Errorf("the state of a table with gc_grace_seconds 86400 expires %v after its ballot, want 24h", lifetime)
	}
	old := time.Now().Add(-time.Minute).UnixMicro()
	recent := time.Now().Add(time.Hour).UnixMicro()
	table := "00000000-0000-0000-0000-00000000beef"
	if _, err := conn.Exec(ctx, `INSERT INTO cqlpg.paxos (table_id, key, token, promised, expires)
		SELECT $1::uuid, int4send(g), g, g, CASE WHEN g % 2 = 0 THEN $2::bigint ELSE $3::bigint END
		FROM generate_series(0, 1199) g
		ON CONFLICT (table_id, digest) DO UPDATE SET expires = excluded.expires`, table, old, recent); err != nil {
		t.Fatal(err)
	}
	s := sweepGateway(t, repair.SweepConfig{BatchRows: 250, PassBatches: 1 << 20}, "")
	var purged int64
	for _, st := range sweep(t, s) {
		purged += st.BallotsPurged
	}
	var left, oldLeft int
	if err := conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE expires = $2::bigint) FROM cqlpg.paxos
		WHERE table_id = $1::uuid`, table, old).Scan(&left, &oldLeft); err != nil {
		t.Fatal(err)
	}
	if purged < 600 || left != 600 || oldLeft != 0 {
		t.Errorf("purged %d Paxos states; %d of ours left, %d of them expired: want the 600 expired ones gone and the 600 others kept", purged, left, oldLeft)
	}
}

// TestSweeperCollectionRemovals checks that the sweeper purges a
// collection's element removals and deletion once gc_grace has passed,
// as Cassandra purges tombstones, without changing what reads see or
// how later writes merge.
func TestSweeperCollectionRemovals(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE IF NOT EXISTS sweep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE sweep.coll (k int PRIMARY KEY, s set<int>, m map<text, int>) WITH gc_grace_seconds = 0",
		"INSERT INTO sweep.coll (k, s, m) VALUES (1, {1, 2, 3}, {'a': 1, 'b': 2})",
		"UPDATE sweep.coll SET s = s - {2}, m = m + {'c': 3} WHERE k = 1",
		"DELETE m['a'] FROM sweep.coll WHERE k = 1")
	cells := func() []string {
		return pgQuery(t, `SELECT concat_ws(' ', "s$cells" ? 'd', "s$cells" ? 'c', "m$cells" ? 'd', "m$cells" ? 'c') FROM sweep.coll`)
	}
	if got := cells(); !slices.Equal(got, []string{"t t t t"}) {
		t.Fatalf("cells before sweeping (removal, deletion; of s, then of m): %q", got)
	}
	s := sweepGateway(t, wholePasses, "")
	waitExpiry() // the purge cutoff counts whole seconds
	sweep(t, s)
	if got := cells(); !slices.Equal(got, []string{"f f f f"}) {
		t.Errorf("cells after sweeping: %q", got)
	}
	wantRows(t, sess.Query("SELECT s, m FROM sweep.coll WHERE k = 1"), "", "[1 3] | map[b:2 c:3]")
	exec(t, sess, "UPDATE sweep.coll SET s = s + {4}, m = m - {'b'} WHERE k = 1")
	wantRows(t, sess.Query("SELECT s, m FROM sweep.coll WHERE k = 1"), "", "[1 3 4] | map[c:3]")
}
