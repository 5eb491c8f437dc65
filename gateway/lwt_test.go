package gateway_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway"
	"github.com/cqlpg/cqlpg/gateway/cluster"
	"github.com/cqlpg/cqlpg/sharding/localpg"
)

// The lightweight transaction tests share the keyspace "lwt", replicated
// on all three shards so that every write reaches every replica.
var lwtOnce sync.Once

func lwtSession(t *testing.T) *gocql.Session {
	t.Helper()
	lwtOnce.Do(func() {
		exec(t, session(t, ""), "CREATE KEYSPACE lwt WITH replication = "+
			"{'class': 'SimpleStrategy', 'replication_factor': 3}")
	})
	return session(t, "lwt")
}

// casCase is a conditional statement and the result it must answer: its
// columns ("name type" joined by ", ") and rows (values joined by " | "),
// or an Invalid error's message.
type casCase struct {
	stmt string
	args []any
	cols string
	rows []string
	err  string
}

func runCAS(t *testing.T, sess *gocql.Session, cases []casCase) {
	t.Helper()
	for _, c := range cases {
		q := sess.Query(c.stmt, c.args...).NoSkipMetadata()
		if c.err != "" {
			requireCQLError(t, q.Exec(), 0x2200, c.err)
			continue
		}
		wantRows(t, q, c.cols, c.rows...)
	}
}

const applied = "[applied] boolean"

// TestLWTResultShapes checks what conditional writes answer, as
// ModificationStatement.buildCasResultSet builds it: [applied] alone when
// applied or when the read found nothing; else the whole row for IF [NOT]
// EXISTS and the condition columns (regular before static) otherwise, with
// the columns the read does not fetch (static columns a write neither sets
// nor tests) null. Conditions on static columns read the static row even
// when the named row does not exist.
func TestLWTResultShapes(t *testing.T) {
	sess := lwtSession(t)
	exec(t, sess, "CREATE TABLE cas (k int, c int, s int static, v int, w text, PRIMARY KEY (k, c))")
	all := applied + ", k int, c int, s int, v int, w varchar"
	runCAS(t, sess, []casCase{
		{stmt: "INSERT INTO cas (k, c, v, w) VALUES (1, 1, 10, 'a') IF NOT EXISTS", cols: applied, rows: []string{"true"}},
		{stmt: "INSERT INTO cas (k, c, v, w) VALUES (1, 1, 11, 'b') IF NOT EXISTS", cols: all,
			rows: []string{"false | 1 | 1 | null | 10 | a"}},
		// Only the static row is tested; the partition exists.
		{stmt: "UPDATE cas SET s = 5 WHERE k = 1 IF s = null", cols: applied, rows: []string{"true"}},
		// A write of no static column does not fetch them; one that sets
		// one fetches them all.
		{stmt: "INSERT INTO cas (k, c, v) VALUES (1, 1, 12) IF NOT EXISTS", cols: all,
			rows: []string{"false | 1 | 1 | null | 10 | a"}},
		{stmt: "INSERT INTO cas (k, c, s, v) VALUES (1, 1, 6, 12) IF NOT EXISTS", cols: all,
			rows: []string{"false | 1 | 1 | 5 | 10 | a"}},
		// A missing row: nothing to show unless static columns are fetched,
		// then the static row, with nulls for the row's columns.
		{stmt: "UPDATE cas SET v = 20 WHERE k = 1 AND c = 2 IF v = 1", cols: applied, rows: []string{"false"}},
		{stmt: "UPDATE cas SET v = 20, s = 6 WHERE k = 1 AND c = 2 IF v = 1", cols: applied + ", v int",
			rows: []string{"false | null"}},
		// The static row answers for static columns, the missing row for
		// the others.
		{stmt: "UPDATE cas SET v = 20 WHERE k = 1 AND c = 2 IF s = 5 AND v = null", cols: applied, rows: []string{"true"}},
		{stmt: "UPDATE cas SET v = 21 WHERE k = 1 AND c = 2 IF s = 4 AND v = 1", cols: applied + ", v int, s int",
			rows: []string{"false | 20 | 5"}},
		{stmt: "UPDATE cas SET s = 7 WHERE k = 1 IF s = 4", cols: applied + ", s int", rows: []string{"false | 5"}},
		{stmt: "UPDATE cas SET v = 30 WHERE k = 1 AND c = 3 IF s = 4", cols: applied + ", s int", rows: []string{"false | 5"}},
		{stmt: "UPDATE cas SET v = 30 WHERE k = 1 AND c = 3 IF s = 5", cols: applied, rows: []string{"true"}},
		// Every operator; IN and != with null.
		{stmt: "UPDATE cas SET v = 31 WHERE k = 1 AND c = 1 IF v > 5 AND v < 20 AND v >= 10 AND v <= 10 AND v != 11 AND v IN (9, 10)",
			cols: applied, rows: []string{"true"}},
		{stmt: "UPDATE cas SET v = 32 WHERE k = 1 AND c = 1 IF w IN ('x', null)", cols: applied + ", w varchar",
			rows: []string{"false | a"}},
		{stmt: "UPDATE cas SET v = 32 WHERE k = 1 AND c = 1 IF v < 31 AND w = 'a'", cols: applied + ", v int, w varchar",
			rows: []string{"false | 31 | a"}},
		{stmt: "UPDATE cas SET w = 'b' WHERE k = 1 AND c = 3 IF w != null", cols: applied + ", w varchar",
			rows: []string{"false | null"}},
		{stmt: "UPDATE cas SET w = 'b' WHERE k = 1 AND c = 3 IF w = null AND v != 1", cols: applied, rows: []string{"true"}},
		{stmt: "UPDATE cas SET v = ? WHERE k = 1 AND c = 1 IF v IN ?", args: []any{33, []int{5, 31}}, cols: applied, rows: []string{"true"}},
		{stmt: "UPDATE cas SET v = ? WHERE k = 1 AND c = 1 IF v IN (?, ?)", args: []any{34, gocql.UnsetValue, 33},
			cols: applied, rows: []string{"true"}},
		// Deletions.
		{stmt: "DELETE FROM cas WHERE k = 1 AND c = 9 IF EXISTS", cols: applied, rows: []string{"false"}},
		{stmt: "DELETE s FROM cas WHERE k = 2 IF EXISTS", cols: applied, rows: []string{"false"}},
		{stmt: "DELETE w FROM cas WHERE k = 1 AND c = 3 IF v = 1", cols: applied + ", v int", rows: []string{"false | 30"}},
		{stmt: "DELETE FROM cas WHERE k = 1 AND c = 3 IF EXISTS", cols: applied, rows: []string{"true"}},
		// Refusals.
		{stmt: "UPDATE cas SET v = 1 WHERE k = 1 AND c = 1 IF v = ?", args: []any{gocql.UnsetValue},
			err: "Invalid 'unset' value in condition"},
		{stmt: "UPDATE cas SET v = 1 WHERE k = 1 AND c = 1 IF v < null", err: `Invalid comparison with null for operator "<"`},
		{stmt: "UPDATE cas SET v = 1 WHERE k = 1 AND c = 1 IF v IN ?", args: []any{nil}, err: "Invalid null list in IN condition"},
		{stmt: "UPDATE cas SET v = 1 WHERE k = 1 AND c = 1 IF v IN ?", args: []any{gocql.UnsetValue},
			err: "Invalid 'unset' value in condition"},
		{stmt: "UPDATE cas SET v = 1 WHERE k = 1 AND c = 1 IF v['a'] = 1", err: "Invalid element access syntax for non-collection column v"},
	})

	// The result's metadata names the statement's table, and gocql's CAS
	// helpers read it.
	iter := sess.Query("INSERT INTO cas (k, c, v, w) VALUES (1, 1, 1, 'z') IF NOT EXISTS").NoSkipMetadata().Iter()
	cols := iter.Columns()
	iter.Close()
	if len(cols) != 6 || cols[0].Keyspace != "lwt" || cols[0].Table != "cas" || cols[0].Name != "[applied]" ||
		cols[5].Keyspace != "lwt" || cols[5].Table != "cas" || cols[5].Name != "w" {
		t.Errorf("result metadata %v", cols)
	}
	// MapScan reads the null s as 0.
	m := map[string]any{}
	ok, err := sess.Query("INSERT INTO cas (k, c, v, w) VALUES (1, 1, 1, 'z') IF NOT EXISTS").MapScanCAS(m)
	if err != nil || ok || fmt.Sprint(m) != "map[c:1 k:1 s:0 v:34 w:a]" {
		t.Errorf("MapScanCAS: %v %v %v", ok, m, err)
	}
	var v int
	var w string
	ok, err = sess.Query("UPDATE cas SET v = 0 WHERE k = 1 AND c = 1 IF v = 0 AND w = 'a'").ScanCAS(&v, &w)
	if err != nil || ok || v != 34 || w != "a" {
		t.Errorf("ScanCAS: %v %d %q %v", ok, v, w, err)
	}
	ok, err = sess.Query("UPDATE cas SET v = 0 WHERE k = 1 AND c = 1 IF v = 34").ScanCAS(&v)
	if err != nil || !ok {
		t.Errorf("ScanCAS of an applied write: %v %v", ok, err)
	}

	// The consistency levels Cassandra accepts for a conditional write.
	err = sess.Query("UPDATE cas SET v = 1 WHERE k = 1 AND c = 1 IF v = 0").
		SerialConsistency(gocql.SerialConsistency(gocql.One)).Exec()
	requireCQLError(t, err, 0x2200, "Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL")
	err = sess.Query("UPDATE cas SET v = 1 WHERE k = 1 AND c = 1 IF v = 0").Consistency(gocql.Consistency(gocql.Serial)).Exec()
	requireCQLError(t, err, 0x2200, `SERIAL is not supported as conditional update commit consistency. `+
		`Use ANY if you mean "make sure it is accepted but I don't care how many replicas commit it for non-SERIAL reads"`)
	wantCAS(t, sess.Query("UPDATE cas SET v = 1 WHERE k = 1 AND c = 1 IF v = 0").SerialConsistency(gocql.LocalSerial),
		applied, "true")
}

// TestLWTCollectionConditions checks conditions on elements of lists and
// maps, on fields of user types, and on whole collections, which
// Cassandra compares cell by cell when they are not frozen: a null one is
// empty.
func TestLWTCollectionConditions(t *testing.T) {
	sess := lwtSession(t)
	exec(t, sess, "CREATE TYPE pt (x int, y text)",
		"CREATE TABLE coll (k int PRIMARY KEY, l list<int>, m map<text, int>, st set<int>, fl frozen<list<int>>, "+
			"u frozen<pt>, nu pt)",
		"INSERT INTO coll (k, l, m, st, fl, u, nu) VALUES (1, [1, 2], {'a': 1}, {3}, [4, 5], {x: 1, y: 'p'}, {x: 2, y: 'q'})")
	runCAS(t, sess, []casCase{
		{stmt: "UPDATE coll SET l = [9] WHERE k = 1 IF m['a'] = 1 AND l[1] = 2 AND fl[0] = 4 AND u.x = 1 AND nu.y = 'q'",
			cols: applied, rows: []string{"true"}},
		{stmt: "UPDATE coll SET l = [8] WHERE k = 1 IF m['a'] = 2", cols: applied + ", m map(varchar, int)",
			rows: []string{"false | map[a:1]"}},
		{stmt: "UPDATE coll SET l = [8] WHERE k = 1 IF m['a'] IN (3, 4) AND l[0] = 9",
			cols: applied + ", m map(varchar, int), l list(int)", rows: []string{"false | map[a:1] | [9]"}},
		// Missing keys and indexes are null.
		{stmt: "UPDATE coll SET l = [8] WHERE k = 1 IF m['zz'] = null AND l[5] = null AND fl[2] = null AND l[0] > 8",
			cols: applied, rows: []string{"true"}},
		{stmt: "UPDATE coll SET l = [7] WHERE k = 1 IF l[0] != 8", cols: applied + ", l list(int)", rows: []string{"false | [8]"}},
		{stmt: "UPDATE coll SET l = [7] WHERE k = 1 IF u.y = 'p' AND nu.x > 1 AND nu.x <= 2", cols: applied, rows: []string{"true"}},
		{stmt: "UPDATE coll SET l = [6] WHERE k = 1 IF u.x = 5", cols: applied + ", u lwt.pt{x=int,y=varchar}", rows: []string{"false | map[x:1 y:p]"}},
		{stmt: "UPDATE coll SET l = [6] WHERE k = 1 IF m[?] = ?", args: []any{"a", 1}, cols: applied, rows: []string{"true"}},
		// Whole collections: a set compares as its sorted elements.
		{stmt: "UPDATE coll SET l = [5] WHERE k = 1 IF st = {3} AND fl = [4, 5] AND m = {'a': 1}", cols: applied, rows: []string{"true"}},
		{stmt: "UPDATE coll SET st = null WHERE k = 1 IF st = ?", args: []any{[]int{3}}, cols: applied, rows: []string{"true"}},
		{stmt: "UPDATE coll SET l = [4] WHERE k = 1 IF st = {}", cols: applied, rows: []string{"true"}},
		{stmt: "UPDATE coll SET l = [3] WHERE k = 1 IF st = null AND st < {1}", cols: applied, rows: []string{"true"}},
		{stmt: "UPDATE coll SET l = [2] WHERE k = 1 IF st > {1}", cols: applied + ", st set(int)", rows: []string{"false | null"}},
		{stmt: "UPDATE coll SET l = [2] WHERE k = 1 IF l > [3, 0] AND l < [4]", cols: applied + ", l list(int)",
			rows: []string{"false | [3]"}},
		// Refusals.
		{stmt: "UPDATE coll SET l = [1] WHERE k = 1 IF m[null] = 1", err: "Invalid null value for map element access"},
		{stmt: "UPDATE coll SET l = [1] WHERE k = 1 IF l[?] = 1", args: []any{nil}, err: "Invalid null value for list element access"},
		{stmt: "UPDATE coll SET l = [1] WHERE k = 1 IF l[?] = 1", args: []any{-1}, err: "Invalid negative list index -1"},
		{stmt: "UPDATE coll SET l = [1] WHERE k = 9 IF l[?] = 1", args: []any{-2}, err: "Invalid negative list index -2"},
		{stmt: "UPDATE coll SET l = [1] WHERE k = 1 IF st[1] = 1", err: "Invalid element access syntax for set column st"},
		{stmt: "UPDATE coll SET l = [1] WHERE k = 1 IF u['x'] = 1", err: "Invalid element access syntax for non-collection column u"},
		{stmt: "UPDATE coll SET l = [1] WHERE k = 1 IF u.zz = 1", err: "Unknown field zz for column u"},
	})
}

// TestLWTBatchShapes checks conditional batches: their conditions hold
// against the partition as it was before the batch, and a refused batch
// shows one row per row its read found, in clustering order, with the
// primary key and the condition columns (or every column for IF [NOT]
// EXISTS); with conditions on the static row only, the read is the
// partition's first row.
func TestLWTBatchShapes(t *testing.T) {
	sess := lwtSession(t)
	// The rows are written at ALL: a conditional batch reads them on the
	// partition's first replica, which a QUORUM write may not have
	// reached yet when the machine is loaded.
	setup := lwtSession(t)
	setup.SetConsistency(gocql.All)
	exec(t, setup, "CREATE TABLE bcas (k int, c int, s int static, v int, w text, PRIMARY KEY (k, c))",
		"INSERT INTO bcas (k, c, v, w) VALUES (10, 1, 1, 'x')",
		"INSERT INTO bcas (k, c, v, w) VALUES (10, 2, 2, 'y')",
		"UPDATE bcas SET s = 2 WHERE k = 10")
	batch := func(stmts ...string) string { return "BEGIN BATCH " + strings.Join(stmts, "; ") + " APPLY BATCH" }
	keyed := applied + ", k int, c int"
	runCAS(t, sess, []casCase{
		{stmt: batch("UPDATE bcas SET w = 'z' WHERE k = 10 AND c = 1", "UPDATE bcas SET s = 3 WHERE k = 10 IF s = 1"),
			cols: keyed + ", s int", rows: []string{"false | 10 | 1 | 2"}},
		{stmt: batch("UPDATE bcas SET s = 3 WHERE k = 10 IF s = 2", "UPDATE bcas SET v = 10 WHERE k = 10 AND c = 2 IF v = 2",
			"UPDATE bcas SET v = 20 WHERE k = 10 AND c = 1 IF v = 0"),
			cols: keyed + ", s int, v int", rows: []string{"false | 10 | 1 | 2 | 1", "false | 10 | 2 | 2 | 2"}},
		{stmt: batch("UPDATE bcas SET s = 3 WHERE k = 10 IF s = 2", "UPDATE bcas SET v = 10 WHERE k = 10 AND c = 2 IF v = 2",
			"UPDATE bcas SET v = 20 WHERE k = 10 AND c = 1 IF v = 1", "INSERT INTO bcas (k, c, v) VALUES (10, 3, 30)"),
			cols: applied, rows: []string{"true"}},
		// Both conditions see the state before the batch.
		{stmt: batch("UPDATE bcas SET v = 21 WHERE k = 10 AND c = 1 IF v = 20", "UPDATE bcas SET w = 'q' WHERE k = 10 AND c = 1 IF v = 20"),
			cols: applied, rows: []string{"true"}},
		{stmt: batch("INSERT INTO bcas (k, c, v) VALUES (10, 2, 5) IF NOT EXISTS", "INSERT INTO bcas (k, c, v) VALUES (10, 4, 5) IF NOT EXISTS"),
			cols: applied + ", k int, c int, s int, v int, w varchar", rows: []string{"false | 10 | 2 | null | 10 | y"}},
		{stmt: batch("INSERT INTO bcas (k, c, v) VALUES (10, 4, 4) IF NOT EXISTS", "INSERT INTO bcas (k, c, v) VALUES (10, 5, 5) IF NOT EXISTS"),
			cols: applied, rows: []string{"true"}},
		{stmt: batch("UPDATE bcas SET v = 1 WHERE k = 10 AND c = 9 IF v = 1", "UPDATE bcas SET s = 1 WHERE k = 10 IF s = 3"),
			cols: keyed + ", v int, s int", rows: []string{"false | 10 | null | null | 3"}},
		// An empty partition shows nothing.
		{stmt: batch("UPDATE bcas SET s = 1 WHERE k = 20 IF s = null", "UPDATE bcas SET v = 1 WHERE k = 20 AND c = 1 IF v = 5"),
			cols: applied, rows: []string{"false"}},
		// Refusals.
		{stmt: batch("UPDATE bcas SET v = 1 WHERE k = 10 AND c = 1 IF v = 1", "DELETE FROM bcas WHERE k = 10 AND c = 1 IF EXISTS"),
			err: "Cannot mix IF conditions and IF EXISTS for the same row"},
		{stmt: batch("INSERT INTO bcas (k, c, v) VALUES (10, 1, 1) IF NOT EXISTS", "UPDATE bcas SET v = 1 WHERE k = 10 AND c = 1 IF v = 1"),
			err: "Cannot mix IF conditions and IF NOT EXISTS for the same row"},
		{stmt: batch("INSERT INTO bcas (k, c, v) VALUES (10, 1, 1) IF NOT EXISTS", "DELETE FROM bcas WHERE k = 10 AND c = 1 IF EXISTS"),
			err: "Cannot mix IF EXISTS and IF NOT EXISTS conditions for the same row"},
		{stmt: batch("UPDATE bcas SET v = 1 WHERE k = 10 AND c = 1 IF v = 1", "UPDATE bcas SET v = 1 WHERE k = 11 AND c = 1 IF v = 1"),
			err: "Batch with conditions cannot span multiple partitions"},
	})
	wantRows(t, sess.Query("SELECT c, s, v, w FROM bcas WHERE k = 10"), "",
		"1 | 3 | 21 | q", "2 | 3 | 10 | y", "3 | 3 | 30 | null", "4 | 3 | 4 | null", "5 | 3 | 5 | null")

	// The BATCH message answers alike; ExecuteBatchCAS reads every row.
	b := sess.NewBatch(gocql.LoggedBatch)
	b.Query("UPDATE bcas SET v = ? WHERE k = ? AND c = ? IF v = ?", 0, 10, 1, 0)
	b.Query("UPDATE bcas SET v = ? WHERE k = ? AND c = ? IF v = ?", 0, 10, 2, 10)
	var k, c, v int
	var s *int
	ok, iter, err := sess.ExecuteBatchCAS(b, &k, &c, &v)
	if err != nil || ok || k != 10 || c != 1 || v != 21 {
		t.Fatalf("ExecuteBatchCAS: %v %d %d %d %v", ok, k, c, v, err)
	}
	if !iter.Scan(&ok, &k, &c, &v) || ok || c != 2 || v != 10 || iter.Scan(&ok, &k, &c, &v) {
		t.Errorf("second row: %v %d %d %d", ok, k, c, v)
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	b = sess.NewBatch(gocql.UnloggedBatch)
	b.Query("UPDATE bcas SET s = ? WHERE k = ? IF s = ?", 4, 10, 3)
	b.Query("INSERT INTO bcas (k, c, v) VALUES (?, ?, ?)", 10, 6, 6)
	m := map[string]any{}
	if ok, iter, err = sess.MapExecuteBatchCAS(b, m); err != nil || !ok {
		t.Fatalf("MapExecuteBatchCAS: %v %v %v", ok, m, err)
	}
	iter.Close()
	if err := sess.Query("SELECT s, v FROM bcas WHERE k = 10 AND c = 6").Scan(&s, &v); err != nil || s == nil || *s != 4 || v != 6 {
		t.Errorf("after the batch: %v %d %v", s, v, err)
	}
}

// TestLWTTimestamps checks that conditional writes take effect in the order
// they apply, whatever timestamps clients send: Cassandra writes them at
// their Paxos ballot, which grows with every transaction of a partition,
// and ignores the client's. Without that, a write at a client timestamp
// older than the previous write's would report applied and stay invisible.
func TestLWTTimestamps(t *testing.T) {
	sess := lwtSession(t)
	exec(t, sess, "CREATE TABLE ts (k int PRIMARY KEY, v int)")
	hour := int64(time.Hour / time.Microsecond)
	now := time.Now().UnixMicro()
	wantCAS(t, sess.Query("INSERT INTO ts (k, v) VALUES (1, 1) IF NOT EXISTS").WithTimestamp(now+hour), applied, "true")
	wantCAS(t, sess.Query("UPDATE ts SET v = 2 WHERE k = 1 IF v = 1").WithTimestamp(now-hour), applied, "true")
	wantRows(t, sess.Query("SELECT v FROM ts WHERE k = 1"), "", "2")
	wantCAS(t, sess.Query("DELETE FROM ts WHERE k = 1 IF EXISTS").WithTimestamp(now+2*hour), applied, "true")
	wantCAS(t, sess.Query("INSERT INTO ts (k, v) VALUES (1, 3) IF NOT EXISTS").WithTimestamp(1), applied, "true")
	wantRows(t, sess.Query("SELECT v FROM ts WHERE k = 1"), "", "3")
	// The write times are the first replica's clock, not the client's.
	var wt int64
	if err := sess.Query("SELECT WRITETIME(v) FROM ts WHERE k = 1").Scan(&wt); err != nil || wt < now || wt > now+hour/60 {
		t.Errorf("WRITETIME %d, want the time of the write, %d or a little later (%v)", wt, now, err)
	}
	// A conditional batch ignores the client's timestamp too.
	b := sess.NewBatch(gocql.LoggedBatch).WithTimestamp(5)
	b.Query("UPDATE ts SET v = 4 WHERE k = 1 IF v = 3")
	b.Query("INSERT INTO ts (k, v) VALUES (2, 4)")
	if err := sess.ExecuteBatch(b); err == nil {
		t.Error("a conditional batch across partitions applied")
	}
	b = sess.NewBatch(gocql.LoggedBatch).WithTimestamp(5)
	b.Query("UPDATE ts SET v = 4 WHERE k = 1 IF v = 3")
	if ok, _, err := sess.ExecuteBatchCAS(b); err != nil || !ok {
		t.Fatalf("batch: %v %v", ok, err)
	}
	wantRows(t, sess.Query("SELECT v FROM ts WHERE k = 1"), "", "4")
}

// twoGateways returns sessions on the shared gateway and on a second one,
// a process of its own on the same shards, started after the schema
// changes already made.
func twoGateways(t *testing.T, keyspace string) []*gocql.Session {
	other := startGatewayProcess(t, shardURLs)
	return []*gocql.Session{sessionOn(t, gw, keyspace), other.session(t, keyspace)}
}

// TestLWTInsertRace races clients of two gateways to insert the same rows
// IF NOT EXISTS: for each row at most one wins, every loser sees the same
// owner, which is the winner or a client whose insert ended unknown (a
// CAS write timeout, which contention can answer), and every replica holds
// it.
func TestLWTInsertRace(t *testing.T) {
	exec(t, lwtSession(t), "CREATE TABLE race (k int PRIMARY KEY, owner int)")
	sessions := twoGateways(t, "lwt")
	const rows, clients = 40, 16
	winners := make([]atomic.Int32, rows)
	seen := make([][]int, rows)
	unknown := make([]map[int]bool, rows)
	for k := range unknown {
		unknown[k] = map[int]bool{}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	start := time.Now()
	for cl := range clients {
		sess := sessions[cl%2]
		wg.Go(func() {
			for k := range rows {
				m := map[string]any{}
				ok, err := sess.Query("INSERT INTO race (k, owner) VALUES (?, ?) IF NOT EXISTS", k, cl).MapScanCAS(m)
				var wto *gocql.RequestErrWriteTimeout
				if errors.As(err, &wto) && wto.WriteType == "CAS" {
					mu.Lock()
					unknown[k][cl] = true
					mu.Unlock()
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				owner := cl
				if ok {
					winners[k].Add(1)
				} else {
					owner = m["owner"].(int)
				}
				mu.Lock()
				seen[k] = append(seen[k], owner)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	unknowns := 0
	for k := range unknown {
		unknowns += len(unknown[k])
	}
	t.Logf("%d contended INSERT IF NOT EXISTS in %v, %d unknown: %.0f LWT/s over two gateways, RF=3",
		rows*clients, elapsed.Round(time.Millisecond), unknowns, float64(rows*clients)/elapsed.Seconds())
	if unknowns > rows*clients/10 {
		t.Errorf("%d of %d inserts ended unknown", unknowns, rows*clients)
	}
	serial := gocql.Consistency(gocql.Serial)
	want := make([]string, rows)
	for k := range rows {
		var owner int
		if err := sessions[0].Query("SELECT owner FROM race WHERE k = ?", k).Consistency(serial).Scan(&owner); err != nil {
			t.Fatal(err)
		}
		want[k] = fmt.Sprintf("%d | %d", k, owner)
		if n := winners[k].Load(); n > 1 || n == 0 && !unknown[k][owner] {
			t.Errorf("row %d: %d winners, owner %d, unknown %v", k, n, owner, unknown[k])
			continue
		}
		for _, o := range seen[k] {
			if o != owner {
				t.Errorf("row %d: clients saw owners %v, the row's is %d", k, seen[k], owner)
				break
			}
		}
	}
	// A commit reaches the third replica after its client is answered
	// (the commit waits for a quorum), so each shard holds every row a
	// moment later, not at once.
	table, col := storedTable(t, "lwt", "race")
	var stored [][]string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		stored = onEveryShard(t, fmt.Sprintf("SELECT %s, %s FROM %s ORDER BY 1", col("k"), col("owner"), table))
		if !slices.ContainsFunc(stored, func(rows []string) bool { return !slices.Equal(rows, want) }) {
			break
		}
	}
	for shard, rows := range stored {
		if !slices.Equal(rows, want) {
			t.Errorf("shard %d holds %v, want %v", shard, rows, want)
		}
	}
}

// TestLWTCompareAndSet runs compare-and-set counters from clients of two
// gateways: each reads the value (a SERIAL read, or the value a refused
// write shows) and sets it one higher if unchanged. A value must end at the
// number of writes applied, each applied write having seen a distinct
// value, and every replica must hold it. The second counter is a static
// column that each client sets through a row of its own: conditional
// writes serialize per partition, not per row.
func TestLWTCompareAndSet(t *testing.T) {
	lwt := lwtSession(t)
	exec(t, lwt, "CREATE TABLE cas_counter (k int PRIMARY KEY, v int)",
		"CREATE TABLE cas_static (k int, c int, s int static, v int, PRIMARY KEY (k, c))")
	wantCAS(t, lwt.Query("INSERT INTO cas_counter (k, v) VALUES (0, 0) IF NOT EXISTS"), applied, "true")
	wantCAS(t, lwt.Query("INSERT INTO cas_static (k, s) VALUES (0, 0) IF NOT EXISTS"), applied, "true")
	sessions := twoGateways(t, "lwt")
	t.Run("row", func(t *testing.T) {
		casCounter(t, sessions, "lwt", 3, "cas_counter", "v", "SELECT v FROM cas_counter WHERE k = 0",
			"UPDATE cas_counter SET v = ? WHERE k = 0 IF v = ?",
			func(client, cur int) []any { return []any{cur + 1, cur} })
	})
	t.Run("static", func(t *testing.T) {
		casCounter(t, sessions, "lwt", 3, "cas_static", "s", "SELECT s FROM cas_static WHERE k = 0 LIMIT 1",
			"UPDATE cas_static SET s = ?, v = ? WHERE k = 0 AND c = ? IF s = ?",
			func(client, cur int) []any { return []any{cur + 1, client, client, cur} })
	})
	// With one replica, its acceptance decides: the proposal and the
	// commit go in one transaction, which a refusal rolls back.
	t.Run("rf1", func(t *testing.T) {
		exec(t, lwt, "CREATE KEYSPACE lwt1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
			"CREATE TABLE lwt1.cas_counter (k int PRIMARY KEY, v int)",
			"INSERT INTO lwt1.cas_counter (k, v) VALUES (0, 0) IF NOT EXISTS")
		casCounter(t, sessions, "lwt1", 1, "cas_counter", "v", "SELECT v FROM lwt1.cas_counter WHERE k = 0",
			"UPDATE lwt1.cas_counter SET v = ? WHERE k = 0 IF v = ?",
			func(client, cur int) []any { return []any{cur + 1, cur} })
	})
}

// casCounter runs 16 clients incrementing a column by compare-and-set, 25
// times each, and checks the result; args gives update's values for a
// client and the value it expects. A CAS write timeout, which contention
// past cas_contention_timeout answers as Cassandra does, leaves the
// write's outcome unknown: the client reads the value again, and the end
// value may count the write or not.
func casCounter(t *testing.T, sessions []*gocql.Session, ks string, rf int, table, column, read, update string,
	args func(client, cur int) []any) {
	const clients, each = 16, 25
	var attempts, unknown atomic.Int64
	var mu sync.Mutex
	var from []int
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	serial := gocql.Consistency(gocql.Serial)
	start := time.Now()
	for cl := range clients {
		sess := sessions[cl%2]
		wg.Go(func() {
			var cur int
			reread := func() error {
				for {
					err := sess.Query(read).Consistency(serial).Scan(&cur)
					var rto *gocql.RequestErrReadTimeout
					var wto *gocql.RequestErrWriteTimeout
					if !errors.As(err, &rto) && !errors.As(err, &wto) {
						return err
					}
				}
			}
			if err := reread(); err != nil {
				errs <- err
				return
			}
			for done := 0; done < each; {
				attempts.Add(1)
				m := map[string]any{}
				ok, err := sess.Query(update, args(cl, cur)...).MapScanCAS(m)
				var wto *gocql.RequestErrWriteTimeout
				switch {
				case errors.As(err, &wto) && wto.WriteType == "CAS":
					unknown.Add(1)
					done++
					if err := reread(); err != nil {
						errs <- err
						return
					}
				case err != nil:
					errs <- err
					return
				case ok:
					mu.Lock()
					from = append(from, cur)
					mu.Unlock()
					cur++
					done++
				case cl%4 == 0:
					// Half the clients of each gateway read again.
					if err := reread(); err != nil {
						errs <- err
						return
					}
				default:
					cur = m[column].(int)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d compare-and-set applied, %d unknown, in %d attempts in %v: %.0f attempts/s, %.0f applied/s on one partition over two gateways, RF=%d",
		len(from), unknown.Load(), attempts.Load(), elapsed.Round(time.Millisecond),
		float64(attempts.Load())/elapsed.Seconds(), float64(len(from))/elapsed.Seconds(), rf)
	if unknown.Load() > clients*each/10 {
		t.Errorf("%d of %d compare-and-set ended unknown", unknown.Load(), clients*each)
	}
	var end int
	if err := sessions[0].Query(read).Consistency(serial).Scan(&end); err != nil {
		t.Fatal(err)
	}
	// Each applied write saw its own value, below the end value, which
	// counts every applied write and at most every unknown one.
	slices.Sort(from)
	if len(from) > 0 && (len(slices.Compact(slices.Clone(from))) != len(from) || from[len(from)-1] >= end) {
		t.Fatalf("applied writes saw values %v, end value %d: want distinct values below it", from, end)
	}
	if end < len(from) || end > len(from)+int(unknown.Load()) {
		t.Fatalf("end value %d, with %d writes applied and %d unknown", end, len(from), unknown.Load())
	}
	for _, sess := range sessions {
		wantRows(t, sess.Query(read).Consistency(serial), "", fmt.Sprint(end))
	}
	relation, col := storedTable(t, ks, table)
	if column == "s" {
		// Static columns live in the table's companion table.
		relation = strings.Replace(relation, `"`+table+`"`, `"`+table+`$static"`, 1)
	}
	holding := 0
	for shard, rows := range onEveryShard(t, fmt.Sprintf("SELECT %s FROM %s", col(column), relation)) {
		switch {
		case slices.Equal(rows, []string{fmt.Sprint(end)}):
			holding++
		case len(rows) > 0:
			t.Errorf("shard %d holds %v", shard, rows)
		}
	}
	if holding != rf {
		t.Errorf("%d shards hold the end value %d, want the %d replicas", holding, end, rf)
	}
}

// TestLWTSerialRead checks SELECTs at SERIAL and LOCAL_SERIAL, as gocql
// sends them (the query's consistency): one partition at a time, read under
// the partition's lock, so that a conditional write holding it is waited
// for rather than read around.
func TestLWTSerialRead(t *testing.T) {
	sess := lwtSession(t)
	exec(t, sess, "CREATE TABLE sr (k int, c int, v int, PRIMARY KEY (k, c))",
		"INSERT INTO sr (k, c, v) VALUES (1, 1, 1)", "INSERT INTO sr (k, c, v) VALUES (1, 2, 2)", "INSERT INTO sr (k, c, v) VALUES (2, 1, 3)")
	serial, local := gocql.Consistency(gocql.Serial), gocql.Consistency(gocql.LocalSerial)
	wantRows(t, sess.Query("SELECT c, v FROM sr WHERE k = 1").Consistency(serial), "", "1 | 1", "2 | 2")
	wantRows(t, sess.Query("SELECT v FROM sr WHERE k = ? AND c = ?", 1, 2).Consistency(local), "", "2")
	wantRows(t, sess.Query("SELECT count(*) FROM sr WHERE k = 2").Consistency(serial), "", "1")
	wantRows(t, sess.Query("SELECT v FROM sr WHERE k = 3").Consistency(serial), "")
	// Several partitions by key: refused unpaged, or when the limit fits
	// in one page, as Cassandra reads them as one group then; paged, one
	// Paxos read per partition. A range read is a quorum read.
	const onePartition = "SERIAL/LOCAL_SERIAL consistency may only be requested for one partition at a time"
	requireCQLError(t, sess.Query("SELECT * FROM sr WHERE k IN (1, 2)").Consistency(serial).PageSize(0).Exec(), 0x2200, onePartition)
	requireCQLError(t, sess.Query("SELECT * FROM sr WHERE k IN (1, 2) LIMIT 10").Consistency(serial).Exec(), 0x2200, onePartition)
	wantRows(t, sess.Query("SELECT k, c, v FROM sr WHERE k IN (1, 2)").Consistency(serial), "", "1 | 1 | 1", "1 | 2 | 2", "2 | 1 | 3")
	wantRows(t, sess.Query("SELECT count(*) FROM sr").Consistency(local), "", "3")
	wantRows(t, sess.Query("SELECT count(*) FROM sr WHERE token(k) > -9223372036854775808").Consistency(serial), "", "3")
}

// TestLWTBatchMessage checks a conditional batch sent as a BATCH message
// of prepared statements, as drivers send one: each statement is planned
// on its own, the first with no condition and a later one testing only
// the static row, which reads the partition.
func TestLWTBatchMessage(t *testing.T) {
	sess := lwtSession(t)
	exec(t, sess, "CREATE TABLE bm (k int, c int, s int static, v int, PRIMARY KEY (k, c))",
		"INSERT INTO bm (k, c, s, v) VALUES (1, 1, 1, 1)")
	for _, want := range []bool{true, false} {
		b := sess.NewBatch(gocql.LoggedBatch)
		b.Query("INSERT INTO bm (k, c, v) VALUES (?, ?, ?)", 1, 2, 2)
		b.Query("UPDATE bm SET s = ? WHERE k = ? IF s = ?", 2, 1, 1)
		applied, iter, err := sess.ExecuteBatchCAS(b)
		if err != nil {
			t.Fatal(err)
		}
		iter.Close()
		if applied != want {
			t.Errorf("batch applied %v, want %v", applied, want)
		}
	}
	wantRows(t, sess.Query("SELECT c, s, v FROM bm WHERE k = 1").Consistency(gocql.All), "", "1 | 2 | 1", "2 | 2 | 2")
}

// TestLWTBatchRangeDeletion checks a conditional batch that deletes a
// range of rows: its proposal carries the table lock a range deletion
// takes, and another round can finish it from its record.
func TestLWTBatchRangeDeletion(t *testing.T) {
	sess := lwtSession(t)
	exec(t, sess, "CREATE TABLE rd (k int, c int, v int, PRIMARY KEY (k, c))")
	for k := 1; k <= 2; k++ {
		for c := 1; c <= 4; c++ {
			exec(t, sess, fmt.Sprintf("INSERT INTO rd (k, c, v) VALUES (%d, %d, %d)", k, c, c))
		}
	}
	const batch = "BEGIN BATCH DELETE FROM rd WHERE k = ? AND c > 2; UPDATE rd SET v = 9 WHERE k = ? AND c = 1 IF v = 1 APPLY BATCH"
	wantCAS(t, sess.Query(batch, 1, 1), applied, "true")
	wantRows(t, sess.Query("SELECT c, v FROM rd WHERE k = 1").Consistency(gocql.All), "", "1 | 9", "2 | 2")
	// Its commit lost everywhere, the next round finishes it.
	defer gw.DropPaxos(nil)
	gw.DropPaxos(func(phase string, shard int) bool { return phase == "commit" })
	var wto *gocql.RequestErrWriteTimeout
	if err := sess.Query(batch, 2, 2).Exec(); !errors.As(err, &wto) || wto.WriteType != "CAS" {
		t.Fatalf("a batch whose commit was lost: %v, want a CAS write timeout", err)
	}
	gw.DropPaxos(nil)
	wantRows(t, sess.Query("SELECT c, v FROM rd WHERE k = 2").Consistency(gocql.Consistency(gocql.Serial)), "", "1 | 9", "2 | 2")
	wantRows(t, sess.Query("SELECT c, v FROM rd WHERE k = 2").Consistency(gocql.All), "", "1 | 9", "2 | 2")
}

// TestLWTUnfinishedRounds checks that a proposal a round left half done is
// finished by the next round when a quorum may have accepted it, and never
// appears once a read has not seen it (CASSANDRA-12126's shape): a
// proposal only one replica of three accepted, followed by a SERIAL read
// through the other two, stays undone when all three answer again.
func TestLWTUnfinishedRounds(t *testing.T) {
	sess := lwtSession(t)
	exec(t, sess, "CREATE TABLE ur (k int PRIMARY KEY, v int)", "INSERT INTO ur (k, v) VALUES (1, 1)", "INSERT INTO ur (k, v) VALUES (2, 1)")
	defer gw.DropPaxos(nil)
	serial := gocql.Consistency(gocql.Serial)
	replicas, err := gw.PartitionReplicas("lwt", "ur", binary.BigEndian.AppendUint32(nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	a := replicas[0]
	var wto *gocql.RequestErrWriteTimeout
	// Only a accepts v = 2: the outcome is unknown to the client.
	gw.DropPaxos(func(phase string, shard int) bool { return phase == "propose" && shard != a })
	err = sess.Query("UPDATE ur SET v = 2 WHERE k = 1 IF v = 1").Exec()
	if !errors.As(err, &wto) || wto.WriteType != "CAS" || wto.BlockFor != 2 {
		t.Fatalf("a proposal one replica of three accepted: %v, want a CAS write timeout, of 2", err)
	}
	// A SERIAL read that does not reach a does not see it, and proposes
	// nothing over it...
	gw.DropPaxos(func(phase string, shard int) bool { return shard == a })
	wantRows(t, sess.Query("SELECT v FROM ur WHERE k = 1").Consistency(serial), "", "1")
	// ...so that it never appears, to reads or conditions.
	gw.DropPaxos(nil)
	wantRows(t, sess.Query("SELECT v FROM ur WHERE k = 1").Consistency(serial), "", "1")
	if ok, err := sess.Query("UPDATE ur SET v = 3 WHERE k = 1 IF v = 1").ScanCAS(); err != nil || !ok {
		t.Fatalf("compare-and-set from 1 after the unfinished proposal of 2: applied %v, %v", ok, err)
	}
	wantRows(t, sess.Query("SELECT v FROM ur WHERE k = 1").Consistency(gocql.All), "", "3")

	// A proposal every replica accepted, whose commit reached none (its
	// gateway died): the next round finishes it, on every replica.
	gw.DropPaxos(func(phase string, shard int) bool { return phase == "commit" })
	err = sess.Query("UPDATE ur SET v = 2 WHERE k = 2 IF v = 1").Exec()
	if !errors.As(err, &wto) || wto.WriteType != "CAS" {
		t.Fatalf("a proposal whose commit was lost: %v, want a CAS write timeout", err)
	}
	wantRows(t, sess.Query("SELECT v FROM ur WHERE k = 2").Consistency(gocql.One), "", "1")
	gw.DropPaxos(nil)
	wantRows(t, sess.Query("SELECT v FROM ur WHERE k = 2").Consistency(serial), "", "2")
	for _, shard := range replicas {
		conn, err := pgx.Connect(context.Background(), shardURLs[shard])
		if err != nil {
			t.Fatal(err)
		}
		table, col := storedTable(t, "lwt", "ur")
		var v int32
		err = conn.QueryRow(context.Background(), fmt.Sprintf("SELECT %s FROM %s WHERE %s = 2", col("v"), table, col("k"))).Scan(&v)
		conn.Close(context.Background())
		if err != nil || v != 2 {
			t.Errorf("shard %d holds v = %d (%v) after the round was finished, want 2", shard, v, err)
		}
	}
}

// TestReadRepairTornDuringIt checks a QUORUM read whose replicas
// disagreed: once they are repaired, conditional writes landing before the
// read takes its data again can leave the data replica torn, with a later
// write but not the one before it (its commit lost, a hint pending). The
// read answers with what its replicas agree on, as Cassandra answers with
// what a quorum holds, never with one replica's torn state.
func TestReadRepairTornDuringIt(t *testing.T) {
	sess, other := lwtSession(t), session(t, "lwt")
	exec(t, sess, "CREATE TABLE rt (k int, c int, v int, PRIMARY KEY (k, c))")
	for c := 1; c <= 3; c++ {
		if err := sess.Query("INSERT INTO rt (k, c, v) VALUES (1, ?, 0)", c).Consistency(gocql.All).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	replicas, err := gw.PartitionReplicas("lwt", "rt", binary.BigEndian.AppendUint32(nil, 1))
	if err != nil {
		t.Fatal(err)
	}
	data, digest := replicas[0], replicas[1] // the replicas a QUORUM read asks
	defer gw.DropPaxos(nil)
	defer gw.OnReadRepaired(nil)
	set := func(sess *gocql.Session, c int, drop func(phase string, shard int) bool) {
		t.Helper()
		gw.DropPaxos(drop)
		defer gw.DropPaxos(nil)
		if ok, err := sess.Query("UPDATE rt SET v = 1 WHERE k = 1 AND c = ? IF v = 0", c).ScanCAS(); err != nil || !ok {
			t.Errorf("set c = %d: applied %v, %v", c, ok, err)
		}
	}
	// The data replica misses c = 1's commit: the read's replicas differ.
	set(sess, 1, func(phase string, shard int) bool { return phase == "commit" && shard == data })
	var repaired atomic.Int32
	gw.OnReadRepaired(func() {
		if repaired.Add(1) > 1 {
			return
		}
		// The data replica misses c = 2 (promises and commit come from
		// the others), then gets c = 3, which the digest replica misses.
		set(other, 2, func(phase string, shard int) bool { return phase != "propose" && shard == data })
		set(other, 3, func(phase string, shard int) bool {
			return phase == "prepare" && shard == data || phase == "commit" && shard == digest
		})
	})
	wantRows(t, sess.Query("SELECT c, v FROM rt WHERE k = 1").Consistency(gocql.Quorum), "", "1 | 1", "2 | 1", "3 | 1")
	if repaired.Load() == 0 {
		t.Fatal("the read repaired nothing")
	}
	gw.OnReadRepaired(nil)
	wantRows(t, sess.Query("SELECT c, v FROM rt WHERE k = 1").Consistency(gocql.All), "", "1 | 1", "2 | 1", "3 | 1")
}

// lwtCluster is a gateway on three PostgreSQL servers of its own, which a
// test may stop, pause and restart.
type lwtCluster struct {
	clusters []*localpg.Cluster
	gw       *gateway.Server
}

func startLWTCluster(t *testing.T) *lwtCluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clusters := tempShards(t, 3, localpg.Options{})
	cfg := gateway.Config{Listen: "127.0.0.1:0", Log: testLogger(), RequestTimeout: 2 * time.Second}
	for _, c := range clusters {
		cfg.Shards = append(cfg.Shards, cluster.ShardConfig{URL: c.URL()})
	}
	s, err := gateway.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return &lwtCluster{clusters: clusters, gw: s}
}

// TestLWTReplicaFailure checks that lightweight transactions need only a
// quorum of replicas: with one of three stopped, every conditional insert
// and update applies and SERIAL reads answer; with one paused, they do not
// wait for it; with two stopped, they are refused as Unavailable at
// SERIAL, 2 required and 1 alive, and nothing is written.
func TestLWTReplicaFailure(t *testing.T) {
	lc := startLWTCluster(t)
	sess := sessionOn(t, lc.gw, "")
	exec(t, sess, "CREATE KEYSPACE f WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE f.t (k int PRIMARY KEY, v int)")
	ctx := context.Background()
	serial := gocql.Consistency(gocql.Serial)
	stored := func(shard, k int) string {
		conn, err := pgx.Connect(ctx, lc.clusters[shard].URL())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var v *int32
		err = conn.QueryRow(ctx, `SELECT v FROM f.t WHERE k = $1`, k).Scan(&v)
		if errors.Is(err, pgx.ErrNoRows) {
			return "none"
		} else if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(*v)
	}
	// One shard stopped: 40 inserts on 40 partitions and 40 updates apply.
	if err := lc.clusters[2].Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for k := range 40 {
		if ok, err := sess.Query("INSERT INTO f.t (k, v) VALUES (?, 1) IF NOT EXISTS", k).ScanCAS(); err != nil || !ok {
			t.Fatalf("insert %d with a shard down: applied %v, %v", k, ok, err)
		}
	}
	for k := range 40 {
		if ok, err := sess.Query("UPDATE f.t SET v = 2 WHERE k = ? IF v = 1", k).ScanCAS(); err != nil || !ok {
			t.Fatalf("update %d with a shard down: applied %v, %v", k, ok, err)
		}
		wantRows(t, sess.Query("SELECT v FROM f.t WHERE k = ?", k).Consistency(serial), "", "2")
	}
	// Back up, its hints replayed, it holds every write.
	if err := lc.clusters[2].Restart(ctx); err != nil {
		t.Fatal(err)
	}
	// eventually waits until shard holds want for the keys below n.
	eventually := func(shard, n int, want, what string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for k := 0; k < n; {
			if got := stored(shard, k); got != want {
				if time.Now().After(deadline) {
					t.Fatalf("%s holds %s for %d, want %s", what, got, k, want)
				}
				time.Sleep(100 * time.Millisecond)
				continue
			}
			k++
		}
	}
	eventually(2, 40, "2", "the restarted shard, its hints replayed,")

	// A paused replica: transactions go on with the other two.
	if err := lc.clusters[0].Pause(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for k := range 10 {
		if ok, err := sess.Query("UPDATE f.t SET v = 3 WHERE k = ? IF v = 2", k).ScanCAS(); err != nil || !ok {
			t.Errorf("update %d with a replica paused: applied %v, %v", k, ok, err)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("10 updates with a replica paused took %v: they waited for it", took)
	}
	if err := lc.clusters[0].Resume(); err != nil {
		t.Fatal(err)
	}
	// The commits the paused replica missed reach it once it answers
	// again: the ops left running past the statements' answers, or the
	// hints they leave when they fail at their deadline.
	eventually(0, 10, "3", "the replica paused, once back,")

	// Two stopped: Unavailable at SERIAL, and nothing written.
	for _, c := range lc.clusters[1:] {
		if err := c.Stop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var unavailable *gocql.RequestErrUnavailable
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := sess.Query("UPDATE f.t SET v = 4 WHERE k = 0 IF v = 3").Exec()
		if errors.As(err, &unavailable) {
			if unavailable.Consistency != serial || unavailable.Required != 2 || unavailable.Alive != 1 {
				t.Errorf("with two of three replicas down: %v (%v, required %d, alive %d), want SERIAL, 2, 1",
					err, unavailable.Consistency, unavailable.Required, unavailable.Alive)
			}
			break
		}
		var wto *gocql.RequestErrWriteTimeout
		if !errors.As(err, &wto) || time.Now().After(deadline) {
			t.Fatalf("with two of three replicas down: %v, want Unavailable", err)
		}
		// The gateway learns that a shard is down from its first failure.
		time.Sleep(100 * time.Millisecond)
	}
	err := sess.Query("SELECT v FROM f.t WHERE k = 0").Consistency(serial).Exec()
	if !errors.As(err, &unavailable) {
		t.Errorf("serial read with two replicas down: %v, want unavailable", err)
	}
	if got := stored(0, 0); got != "3" {
		t.Errorf("replica holds %s after an unavailable write, want 3", got)
	}
}

// BenchmarkLWT measures lightweight transactions on the shared gateway, at
// replication factors 1 and 3: applied inserts of new rows one client at
// a time (a transaction's latency) and from 16 clients on distinct
// partitions (uncontended throughput); compare-and-set increments of 16
// clients on 4 partitions (contended, with applied/s and the share of
// attempts that ended unknown); and SERIAL reads against reads at ONE.
func BenchmarkLWT(b *testing.B) {
	for _, rf := range []int{1, 3} {
		b.Run(fmt.Sprintf("rf%d", rf), func(b *testing.B) { benchmarkLWT(b, rf) })
	}
}

func benchmarkLWT(b *testing.B, rf int) {
	ks := fmt.Sprintf("lwt_bench%d", rf)
	exec(b, sessionOn(b, gw, ""), fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = "+
		"{'class': 'SimpleStrategy', 'replication_factor': %d}", ks, rf),
		"CREATE TABLE IF NOT EXISTS "+ks+".t (k int PRIMARY KEY, v int)",
		"TRUNCATE "+ks+".t")
	sess := sessionOn(b, gw, ks)
	var next atomic.Int32
	insert := func(b *testing.B) {
		if ok, err := sess.Query("INSERT INTO t (k, v) VALUES (?, 0) IF NOT EXISTS", next.Add(1)).ScanCAS(); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
	b.Run("insert", func(b *testing.B) {
		for b.Loop() {
			insert(b)
		}
	})
	b.Run("insert-16-clients", func(b *testing.B) {
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				insert(b)
			}
		})
	})
	b.Run("cas-16-clients-4-partitions", func(b *testing.B) {
		for k := range 4 {
			exec(b, sess, fmt.Sprintf("INSERT INTO t (k, v) VALUES (%d, 0)", -1-k))
		}
		var applied, unknown atomic.Int64
		var client atomic.Int32
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			k := -1 - int(client.Add(1))%4
			cur := -1
			for pb.Next() {
				if cur < 0 {
					if err := sess.Query("SELECT v FROM t WHERE k = ?", k).Consistency(gocql.Consistency(gocql.Serial)).Scan(&cur); err != nil {
						cur = -1
						continue
					}
				}
				m := map[string]any{}
				ok, err := sess.Query("UPDATE t SET v = ? WHERE k = ? IF v = ?", cur+1, k, cur).MapScanCAS(m)
				var wto *gocql.RequestErrWriteTimeout
				switch {
				case errors.As(err, &wto):
					unknown.Add(1)
					cur = -1
				case err != nil:
					b.Fatal(err)
				case ok:
					applied.Add(1)
					cur++
				default:
					cur = m["v"].(int)
				}
			}
		})
		b.ReportMetric(float64(applied.Load())/b.Elapsed().Seconds(), "applied/s")
		b.ReportMetric(float64(unknown.Load())/float64(b.N), "unknown/op")
	})
	for _, c := range []struct {
		name string
		cl   gocql.Consistency
	}{{"read-one", gocql.One}, {"read-serial", gocql.Consistency(gocql.Serial)}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				var v int
				if err := sess.Query("SELECT v FROM t WHERE k = -1").Consistency(c.cl).Scan(&v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
