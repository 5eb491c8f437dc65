package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/gateway/repair"
	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// shardSQL runs statements on one shard as the gateway's writer, so that
// they change the bookkeeping exactly as written: the way one replica
// comes to differ from the others when it missed writes.
func shardSQL(t testing.TB, url string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgschema.GatewayConnString(url))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// replicaData returns every row of a table's Postgres tables on a shard,
// as text, sorted.
func replicaData(t *testing.T, url, schema, table string) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var out []string
	for _, name := range []string{table, table + "$static", table + "$deletions"} {
		ident := pgx.Identifier{schema, name}.Sanitize()
		var exists bool
		if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", ident).Scan(&exists); err != nil {
			t.Fatal(err)
		}
		if !exists {
			continue
		}
		rows, err := conn.Query(ctx, "SELECT x::text FROM "+ident+" AS x ORDER BY 1")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, name+" "+s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// replicasAgree checks that every shard holds the same rows of a table,
// and returns how many.
func replicasAgree(t *testing.T, urls []string, schema, table string) int {
	t.Helper()
	first := replicaData(t, urls[0], schema, table)
	for i, u := range urls[1:] {
		other := replicaData(t, u, schema, table)
		if !slices.Equal(first, other) {
			var diff []string
			for _, r := range first {
				if !slices.Contains(other, r) {
					diff = append(diff, "only on shard 0: "+r)
				}
			}
			for _, r := range other {
				if !slices.Contains(first, r) {
					diff = append(diff, fmt.Sprintf("only on shard %d: %s", i+1, r))
				}
			}
			t.Errorf("%s.%s: shards 0 and %d differ:\n%s", schema, table, i+1, strings.Join(diff[:min(len(diff), 20)], "\n"))
		}
	}
	return len(first)
}

func tokenOf(v int32) int64 { return int64(sharding.KeyToken([][]byte{intKey(v)})) }

// TestRepair makes the three replicas of two tables diverge in the ways
// replicas do (a newer cell on one, an older one on another, a row, a
// range and a partition deleted on one only, a static cell and an
// expiring cell on one only, rows one replica never got, a large
// partition missing from one replica), repairs the keyspace, and checks
// that the replicas then hold the same rows, that CQL reads the
// reconciled data, and that a second repair finds nothing to do.
func TestRepair(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "DROP KEYSPACE IF EXISTS rep", "CREATE KEYSPACE rep WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE rep.kv (k int, c int, s text STATIC, v int, w text, l list<int>, m map<text, int>, PRIMARY KEY (k, c))",
		"CREATE TABLE rep.ord (k int, u uuid, f double, v text, PRIMARY KEY (k, u, f)) WITH CLUSTERING ORDER BY (u DESC, f ASC)")
	sess = session(t, "rep")
	b := sess.NewBatch(gocql.UnloggedBatch)
	for k := range 60 {
		for c := range 8 {
			b.Query("INSERT INTO kv (k, c, s, v, w, l, m) VALUES (?, ?, ?, ?, ?, ?, ?)", k, c, fmt.Sprint("s", k), k*10+c,
				fmt.Sprint("w", c), []int{k, c}, map[string]int{"a": c})
		}
		if err := sess.ExecuteBatch(b); err != nil {
			t.Fatal(err)
		}
		b = sess.NewBatch(gocql.UnloggedBatch)
	}
	// One large partition, and small ones, with order-keyed clustering
	// columns: -0.0 and 0.0 are two rows.
	for i := range 2500 {
		b.Query("INSERT INTO ord (k, u, f, v) VALUES (?, ?, ?, ?)", 1, gocql.UUIDFromTime(time.Unix(int64(i/2), 0)),
			math.Copysign(0, float64(i%2*2-1)), fmt.Sprint("v", i))
		if i%250 == 249 {
			if err := sess.ExecuteBatch(b); err != nil {
				t.Fatal(err)
			}
			b = sess.NewBatch(gocql.UnloggedBatch)
		}
	}
	for k := 2; k < 40; k++ {
		exec(t, sess, fmt.Sprintf("INSERT INTO ord (k, u, f, v) VALUES (%d, 5e1aa4a0-4b1b-11ee-be56-0242ac120002, NaN, 'x') USING TTL 86400", k))
	}

	now := time.Now().UnixMicro()
	later, exp := now+10_000_000, time.Now().Unix()+5000
	shardSQL(t, shardURLs[0],
		// A cell newer here than elsewhere.
		fmt.Sprintf(`UPDATE rep.kv SET v = 99, "v$wt" = %d WHERE k = 1 AND c = 1`, later),
		// A range deletion (c > 4 of partition 3) here only.
		fmt.Sprintf(`INSERT INTO rep."kv$deletions" (_token, k, _prefix, "ck$1$lo", _lo_incl, _hi_incl, _del_wt) VALUES (%d, 3, 0, 4, false, false, %d)`,
			tokenOf(3), later),
		fmt.Sprintf(`UPDATE rep.kv SET _del_wt = %d, _row_wt = NULL, _row_exp = NULL, v = NULL, "v$wt" = NULL, "v$exp" = NULL,
			"v$empty" = NULL, w = NULL, "w$wt" = NULL, "w$exp" = NULL, l = NULL, "l$wt" = NULL, "l$exp" = NULL,
			m = NULL, "m$wt" = NULL, "m$exp" = NULL WHERE k = 3 AND c > 4`, later),
		// Rows this replica never got.
		`DELETE FROM rep.kv WHERE k = 4`, `DELETE FROM rep."kv$static" WHERE k = 4`)
	shardSQL(t, shardURLs[1],
		// A cell older here: it loses.
		`UPDATE rep.kv SET w = 'old', "w$wt" = 1 WHERE k = 1 AND c = 2`,
		// A static cell, and an expiring cell, here only.
		fmt.Sprintf(`UPDATE rep."kv$static" SET s = 'only1', "s$wt" = %d WHERE k = 5`, later),
		fmt.Sprintf(`UPDATE rep.kv SET w = 'ttl', "w$wt" = %d, "w$exp" = %d WHERE k = 6 AND c = 0`, later, exp),
		// The large partition, and everything else, missing.
		`DELETE FROM rep.ord`)
	shardSQL(t, shardURLs[2],
		// A row deleted here only.
		fmt.Sprintf(`UPDATE rep.kv SET _del_wt = %d, _row_wt = NULL, _row_exp = NULL, v = NULL, "v$wt" = NULL, "v$exp" = NULL,
			"v$empty" = NULL, w = NULL, "w$wt" = NULL, "w$exp" = NULL, l = NULL, "l$wt" = NULL, "l$exp" = NULL,
			m = NULL, "m$wt" = NULL, "m$exp" = NULL WHERE k = 2 AND c = 1`, later),
		// A partition deletion here only: the rows, the static row and
		// the record.
		fmt.Sprintf(`INSERT INTO rep."kv$deletions" (_token, k, _prefix, _lo_incl, _hi_incl, _del_wt) VALUES (%d, 7, 0, false, false, %d)`,
			tokenOf(7), later),
		fmt.Sprintf(`UPDATE rep."kv$static" SET _del_wt = %d, s = NULL, "s$wt" = NULL, "s$exp" = NULL WHERE k = 7`, later),
		fmt.Sprintf(`DELETE FROM rep.kv WHERE k = 7`),
		// Newer cells in a few rows of the large partition.
		fmt.Sprintf(`UPDATE rep.ord SET v = 'newer', "v$wt" = %d WHERE k = 1 AND v IN ('v10', 'v1000', 'v2000')`, later))

	var reports []repair.Progress
	var mu sync.Mutex
	ctx := context.Background()
	res, err := gw.Repair(ctx, repair.Options{Keyspace: "rep", Progress: func(p repair.Progress) {
		mu.Lock()
		reports = append(reports, p)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("repair: %+v", res)
	if res.Tables != 2 || res.Ranges == 0 || res.RangesRepaired == 0 || res.RowsMoved < 2500 {
		t.Errorf("result %+v", res)
	}
	last := reports[len(reports)-1]
	if last.RangesDone != last.RangesTotal || last.RangesDone != res.Ranges || last.RowsMoved != res.RowsMoved {
		t.Errorf("last progress report %+v, result %+v", last, res)
	}
	if n := replicasAgree(t, shardURLs, "rep", "kv"); n < 480 {
		t.Errorf("%d rows of kv", n)
	}
	if n := replicasAgree(t, shardURLs, "rep", "ord"); n < 2538 {
		t.Errorf("%d rows of ord", n)
	}

	// CQL reads the reconciled data.
	var v int
	var w string
	if err := sess.Query("SELECT v FROM kv WHERE k = 1 AND c = 1").Consistency(gocql.One).Scan(&v); err != nil || v != 99 {
		t.Errorf("the newer cell: %d %v", v, err)
	}
	if err := sess.Query("SELECT w FROM kv WHERE k = 1 AND c = 2").Consistency(gocql.One).Scan(&w); err != nil || w != "w2" {
		t.Errorf("the older cell: %q %v", w, err)
	}
	for _, q := range []string{"SELECT * FROM kv WHERE k = 2 AND c = 1", "SELECT * FROM kv WHERE k = 3 AND c > 4",
		"SELECT * FROM kv WHERE k = 7"} {
		if n := sess.Query(q).Consistency(gocql.One).Iter().NumRows(); n != 0 {
			t.Errorf("%s: %d rows of deleted data", q, n)
		}
	}
	var count int
	if err := sess.Query("SELECT count(*) FROM kv WHERE k = 4").Consistency(gocql.One).Scan(&count); err != nil || count != 8 {
		t.Errorf("the missed partition: %d rows, %v", count, err)
	}
	if err := sess.Query("SELECT s FROM kv WHERE k = 5 LIMIT 1").Consistency(gocql.One).Scan(&w); err != nil || w != "only1" {
		t.Errorf("the static cell: %q %v", w, err)
	}
	var ttl int
	if err := sess.Query("SELECT w, TTL(w) FROM kv WHERE k = 6 AND c = 0").Consistency(gocql.One).Scan(&w, &ttl); err != nil ||
		w != "ttl" || ttl < 4000 || ttl > 5000 {
		t.Errorf("the expiring cell: %q TTL %d %v", w, ttl, err)
	}
	if err := sess.Query("SELECT count(*) FROM ord WHERE k = 1").Consistency(gocql.One).Scan(&count); err != nil || count != 2500 {
		t.Errorf("the large partition: %d rows, %v", count, err)
	}
	if err := sess.Query("SELECT count(*) FROM ord WHERE k = 1 AND v = 'newer' ALLOW FILTERING").Consistency(gocql.One).Scan(&count); err != nil || count != 3 {
		t.Errorf("the newer cells of the large partition: %d rows, %v", count, err)
	}

	// Nothing left to do.
	again, err := gw.Repair(ctx, repair.Options{Keyspace: "rep", Parallel: 4})
	if err != nil || again.RangesRepaired != 0 || again.RowsMoved != 0 || again.Ranges != res.Ranges {
		t.Errorf("second repair: %+v %v", again, err)
	}
	t.Logf("second repair: %v", again.Duration)
}

// TestRepairOptions checks what a repair covers: a table, a keyspace,
// everything, and the errors for names that do not exist.
func TestRepairOptions(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "DROP KEYSPACE IF EXISTS repopt", "CREATE KEYSPACE repopt WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE repopt.a (k int PRIMARY KEY, v int)", "CREATE TABLE repopt.b (k int PRIMARY KEY, v int)",
		"CREATE TABLE repopt.n (k int PRIMARY KEY, n counter)")
	ctx := context.Background()
	ranges := len(gw.Ring().Tokens())
	for _, tc := range []struct {
		opts           repair.Options
		tables, ranges int
		skipped        int
	}{
		{repair.Options{Keyspace: "repopt", Table: "a"}, 1, ranges, 0},
		{repair.Options{Keyspace: "repopt"}, 2, 2 * ranges, 1},
	} {
		res, err := gw.Repair(ctx, tc.opts)
		if err != nil || res.Tables != tc.tables || res.Ranges != tc.ranges || len(res.Skipped) != tc.skipped {
			t.Errorf("%+v: %+v %v", tc.opts, res, err)
		}
	}
	res, err := gw.Repair(ctx, repair.Options{})
	if err != nil || res.Tables < 2 {
		t.Errorf("everything: %+v %v", res, err)
	}
	for _, opts := range []repair.Options{{Keyspace: "nope"}, {Keyspace: "repopt", Table: "nope"},
		{Table: "a"}, {Keyspace: "system"}} {
		if _, err := gw.Repair(ctx, opts); err == nil {
			t.Errorf("%+v: no error", opts)
		}
	}
	if _, err := gw.RepairPartition(ctx, "repopt", "n", intKey(1)); err == nil {
		t.Error("repairing a counter partition: no error")
	}
}

// TestRepairPartition repairs one partition, as blocking read repair
// does: a cell newer on one replica, a row missing from another, a range
// deletion on the third.
func TestRepairPartition(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "DROP KEYSPACE IF EXISTS reppart", "CREATE KEYSPACE reppart WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE reppart.t (k int, c int, v text, PRIMARY KEY (k, c))")
	sess = session(t, "reppart")
	for c := range 20 {
		exec(t, sess, fmt.Sprintf("INSERT INTO t (k, c, v) VALUES (1, %d, 'v%d')", c, c),
			fmt.Sprintf("INSERT INTO t (k, c, v) VALUES (2, %d, 'v%d')", c, c))
	}
	later := time.Now().UnixMicro() + 10_000_000
	shardSQL(t, shardURLs[0], fmt.Sprintf(`UPDATE reppart.t SET v = 'new', "v$wt" = %d WHERE k = 1 AND c = 3`, later),
		`UPDATE reppart.t SET v = 'other', "v$wt" = 1 WHERE k = 2 AND c = 3`)
	shardSQL(t, shardURLs[1], `DELETE FROM reppart.t WHERE k = 1 AND c < 5`)
	shardSQL(t, shardURLs[2],
		fmt.Sprintf(`INSERT INTO reppart."t$deletions" (_token, k, _prefix, "ck$1$hi", _lo_incl, _hi_incl, _del_wt) VALUES (%d, 1, 0, 2, false, true, %d)`,
			tokenOf(1), later),
		fmt.Sprintf(`UPDATE reppart.t SET _del_wt = %d, _row_wt = NULL, _row_exp = NULL, v = NULL, "v$wt" = NULL, "v$exp" = NULL WHERE k = 1 AND c <= 2`, later))

	ctx := context.Background()
	began := time.Now()
	res, err := gw.RepairPartition(ctx, "reppart", "t", intKey(1))
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	// Shard 1 gets 5 rows (2 tombstones among them) and the record;
	// shard 0 the record and 3 tombstones; shard 2 the new cell and two
	// rows it lacks... every replica gets what it lacks, nothing more.
	if res.RowsMoved == 0 || res.RowsMoved > 20 {
		t.Errorf("rows moved: %d", res.RowsMoved)
	}
	t.Logf("partition repair: %d rows in %v", res.RowsMoved, took)
	data := func(url string) []string {
		var out []string
		for _, r := range replicaData(t, url, "reppart", "t") {
			if strings.Contains(r, fmt.Sprintf("(%d,1,", tokenOf(1))) {
				out = append(out, r)
			}
		}
		return out
	}
	first := data(shardURLs[0])
	for _, u := range shardURLs[1:] {
		if got := data(u); !slices.Equal(got, first) {
			t.Errorf("partition differs after repair:\n%s\n%s", strings.Join(got, "\n"), strings.Join(first, "\n"))
		}
	}
	if len(first) != 21 {
		t.Errorf("%d rows of the partition, want 20 and a deletion record", len(first))
	}
	// The other partition was not touched.
	if d := replicaData(t, shardURLs[0], "reppart", "t"); slices.Equal(d, replicaData(t, shardURLs[1], "reppart", "t")) {
		t.Error("the other partition was repaired too")
	}
	var v string
	if err := sess.Query("SELECT v FROM t WHERE k = 1 AND c = 3").Consistency(gocql.One).Scan(&v); err != nil || v != "new" {
		t.Errorf("read %q %v", v, err)
	}
	if n := sess.Query("SELECT * FROM t WHERE k = 1 AND c <= 2").Consistency(gocql.One).Iter().NumRows(); n != 0 {
		t.Errorf("%d deleted rows read", n)
	}
	// Repairing again sends nothing.
	if res, err := gw.RepairPartition(ctx, "reppart", "t", intKey(1)); err != nil || res.RowsMoved != 0 {
		t.Errorf("second repair: %+v %v", res, err)
	}
}

// freezer relays TCP connections to a shard's unix socket and can stop
// relaying, as a shard that hangs (a stopped process, a lost network)
// would, without touching the shard the other tests share.
type freezer struct {
	ln     net.Listener
	socket string
	frozen atomic.Bool
}

func newFreezer(t *testing.T, url string) (*freezer, string) {
	t.Helper()
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln, socket: filepath.Join(cfg.Host, fmt.Sprintf(".s.PGSQL.%d", cfg.Port))}
	t.Cleanup(func() { f.frozen.Store(false); ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.relay(c)
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	return f, fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=%s sslmode=disable", port, cfg.User, cfg.Database)
}

func (f *freezer) relay(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("unix", f.socket)
	if err != nil {
		return
	}
	defer s.Close()
	pipe := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			for f.frozen.Load() {
				time.Sleep(10 * time.Millisecond)
			}
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				dst.Close()
				return
			}
		}
	}
	go pipe(s, c)
	pipe(c, s)
}

// TestRepairReplicaDown repairs, from a tool's cluster (OpenCluster),
// while a replica hangs: the repair leaves it out after one timeout,
// reports it once, repairs the other replicas and returns; once the
// replica answers again, a repair brings it level.
func TestRepairReplicaDown(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "DROP KEYSPACE IF EXISTS down", "CREATE KEYSPACE down WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE down.t (k int PRIMARY KEY, v int)")
	batch := sess.NewBatch(gocql.UnloggedBatch)
	for k := range 50 {
		batch.Query("INSERT INTO down.t (k, v) VALUES (?, ?)", k, k)
	}
	if err := sess.ExecuteBatch(batch); err != nil {
		t.Fatal(err)
	}
	shardSQL(t, shardURLs[0], `DELETE FROM down.t WHERE k < 25`)
	shardSQL(t, shardURLs[1], `DELETE FROM down.t WHERE k >= 25`)
	shardSQL(t, shardURLs[2], `DELETE FROM down.t WHERE k % 5 = 0`)

	ctx := context.Background()
	f, proxied := newFreezer(t, shardURLs[2])
	cfg := gateway.Config{Log: testLogger(), Shards: []cluster.ShardConfig{{URL: shardURLs[0]}, {URL: shardURLs[1]}, {URL: proxied}}}
	c, err := gateway.OpenCluster(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, want := c.Topology().Ring.Tokens(), gw.Ring().Tokens(); !slices.Equal(got, want) {
		t.Fatalf("the tool's ring differs from the gateway's")
	}

	f.frozen.Store(true)
	var failures []error
	began := time.Now()
	// 2 s for a shard to answer: with 500 ms, a shard that was up once
	// missed it under a full test run's load.
	res, err := repair.Run(ctx, c, repair.Options{Keyspace: "down", Timeout: 2 * time.Second,
		Progress: func(p repair.Progress) {
			if p.Err != nil {
				failures = append(failures, p.Err)
			}
		}})
	took := time.Since(began)
	if err == nil || len(failures) != 1 || !strings.Contains(failures[0].Error(), "shard2") || !errors.Is(err, failures[0]) {
		t.Errorf("repair with a replica down: %v, failures reported %v", err, failures)
	}
	t.Logf("repair with a replica down: %v", took)
	if took > 10*time.Second {
		t.Errorf("repair with a replica down took %v", took)
	}
	if res.Ranges != len(gw.Ring().Tokens()) || res.RowsMoved != 50 {
		t.Errorf("result %+v", res)
	}
	replicasAgree(t, shardURLs[:2], "down", "t")

	// Answering again: the next repair brings it level.
	f.frozen.Store(false)
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err = repair.Run(ctx, c, repair.Options{Keyspace: "down"})
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || res.RowsMoved != 10 {
		t.Fatalf("after the replica came back: %+v %v", res, err)
	}
	if n := replicasAgree(t, shardURLs, "down", "t"); n != 50 {
		t.Errorf("%d rows after the replica came back", n)
	}
}

// TestRepairWhileWriting repairs a table again and again while a client
// keeps overwriting and deleting its rows: a repair merges under the
// same row locks as writes and by the same rules, so it never brings
// back an older value, and the replicas end holding the last writes.
func TestRepairWhileWriting(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "DROP KEYSPACE IF EXISTS busy", "CREATE KEYSPACE busy WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE busy.t (k int, c int, v int, PRIMARY KEY (k, c))")
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		for round := 1; ctx.Err() == nil; round++ {
			batch := sess.NewBatch(gocql.UnloggedBatch)
			for k := range 20 {
				for c := range 5 {
					batch.Query("INSERT INTO busy.t (k, c, v) VALUES (?, ?, ?)", k, c, round)
				}
				if round%3 == 0 {
					batch.Query("DELETE FROM busy.t WHERE k = ? AND c > 2", k)
				}
			}
			batch.SetConsistency(gocql.All)
			if err := sess.ExecuteBatch(batch); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	repairs := 0
	for ctx.Err() == nil {
		if _, err := gw.Repair(context.Background(), repair.Options{Keyspace: "busy"}); err != nil {
			t.Fatal(err)
		}
		repairs++
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d repairs while writing", repairs)
	replicasAgree(t, shardURLs, "busy", "t")
}

// TestRepairTokenRange repairs token ranges, as a range scan whose
// replicas disagreed does: one inside the ring and one that wraps around
// its end. Partitions in them are repaired, and only those.
func TestRepairTokenRange(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "DROP KEYSPACE IF EXISTS reprange", "CREATE KEYSPACE reprange WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE reprange.t (k int PRIMARY KEY, v int)")
	batch := sess.NewBatch(gocql.UnloggedBatch)
	var tokens []int64
	for k := range 100 {
		batch.Query("INSERT INTO reprange.t (k, v) VALUES (?, ?)", k, k)
		tokens = append(tokens, tokenOf(int32(k)))
	}
	if err := sess.ExecuteBatch(batch); err != nil {
		t.Fatal(err)
	}
	slices.Sort(tokens)
	shardSQL(t, shardURLs[1], "DELETE FROM reprange.t")
	ctx := context.Background()
	for _, r := range [][2]int64{{tokens[10], tokens[60]}, {tokens[90], tokens[5]}} {
		if _, err := gw.RepairTokenRange(ctx, "reprange", "t", r[0], r[1]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := gw.RepairTokenPartition(ctx, "reprange", "t", tokens[70]); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, shardURLs[1])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, "SELECT _token FROM reprange.t ORDER BY 1")
	got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Concat(tokens[:6], tokens[11:61], tokens[70:71], tokens[91:])
	if !slices.Equal(got, want) {
		t.Errorf("repaired %d partitions, want %d", len(got), len(want))
	}
}

// BenchmarkRepair measures repair on the shared shards (a replication
// factor of 3, 20,000 rows in 2,000 partitions): bringing back a replica
// that lost every row, settling 1% of the rows newer on one replica, and
// repairing one partition with one differing row, as read repair does.
func BenchmarkRepair(b *testing.B) {
	sess := sessionOn(b, gw, "")
	exec(b, sess, "CREATE KEYSPACE IF NOT EXISTS repbench WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE IF NOT EXISTS repbench.t (k int, c int, v text, w bigint, PRIMARY KEY (k, c))")
	const partitions, rows = 2000, 10
	for k := 0; k < partitions; k += 10 {
		batch := sess.NewBatch(gocql.UnloggedBatch)
		for i := k; i < k+10; i++ {
			for c := range rows {
				batch.Query("INSERT INTO repbench.t (k, c, v, w) VALUES (?, ?, ?, ?)", i, c, fmt.Sprint("value ", i, c), i*c)
			}
		}
		if err := sess.ExecuteBatch(batch); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	opts := repair.Options{Keyspace: "repbench", Parallel: 2}
	run := func(b *testing.B, diverge string) {
		var moved int64
		var took time.Duration
		for b.Loop() {
			b.StopTimer()
			shardSQL(b, shardURLs[1], diverge)
			b.StartTimer()
			began := time.Now()
			res, err := gw.Repair(ctx, opts)
			took += time.Since(began)
			if err != nil {
				b.Fatal(err)
			}
			moved += res.RowsMoved
		}
		b.ReportMetric(float64(moved)/took.Seconds(), "rows/s")
	}
	b.Run("lost-replica", func(b *testing.B) { run(b, "DELETE FROM repbench.t") })
	b.Run("1%-newer", func(b *testing.B) {
		run(b, fmt.Sprintf(`UPDATE repbench.t SET w = -1, "w$wt" = "w$wt" + %d WHERE c = 0 AND k %% 10 = 0`, 1+time.Now().UnixMicro()%1000))
	})
	b.Run("in-sync", func(b *testing.B) { run(b, "SELECT 1") })
	b.Run("partition-in-sync", func(b *testing.B) {
		for b.Loop() {
			if _, err := gw.RepairPartition(ctx, "repbench", "t", intKey(8)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("partition", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			shardSQL(b, shardURLs[1], `UPDATE repbench.t SET w = -1, "w$wt" = "w$wt" + 1 WHERE k = 7 AND c = 3`)
			b.StartTimer()
			if _, err := gw.RepairPartition(ctx, "repbench", "t", intKey(7)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
