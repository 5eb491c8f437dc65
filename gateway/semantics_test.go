package gateway_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
)

// The tests of this file check the write semantics of reference §4 that
// the feature tests leave implicit, one test per point, through gocql.
// Counters (counters_test.go), lightweight transactions (lwt_test.go) and
// batches (batch_test.go) have files of their own.

func semanticsSession(t *testing.T) *gocql.Session {
	t.Helper()
	exec(t, session(t, ""), "CREATE KEYSPACE IF NOT EXISTS sem WITH replication = "+
		"{'class': 'SimpleStrategy', 'replication_factor': 2}")
	return session(t, "sem")
}

// TestSemanticsLiveness: INSERT and UPDATE never check existence; an
// inserted row outlives its cells, and a row UPDATE created does not, by
// deletion or by expiry; INSERT's TTL expires its row marker too. TTLs
// are 2 s: expiry is judged in whole seconds, as in Cassandra, so a cell
// with a TTL of 1 s can expire a millisecond after it was written.
func TestSemanticsLiveness(t *testing.T) {
	sess := semanticsSession(t)
	q := sess.Query
	exec(t, sess, "CREATE TABLE live (k int, c int, v int, w int, PRIMARY KEY (k, c))",
		// An UPDATE of a missing row creates it, an INSERT of an existing
		// one overwrites it.
		"UPDATE live SET v = 1 WHERE k = 1 AND c = 1",
		"INSERT INTO live (k, c, v) VALUES (1, 1, 2)",
		"INSERT INTO live (k, c, v, w) VALUES (2, 1, 1, 1)",
		"DELETE v, w FROM live WHERE k = 2 AND c = 1",
		"UPDATE live SET v = 1, w = 1 WHERE k = 3 AND c = 1",
		"DELETE v FROM live WHERE k = 3 AND c = 1",
		"UPDATE live USING TTL 2 SET v = 1 WHERE k = 4 AND c = 1",
		"INSERT INTO live (k, c) VALUES (5, 1) USING TTL 2",
		"INSERT INTO live (k, c, v) VALUES (6, 1, 1) USING TTL 2",
		"UPDATE live SET w = 6 WHERE k = 6 AND c = 1",
		"INSERT INTO live (k, c) VALUES (7, 1)")
	wantRows(t, q("SELECT k, v, w FROM live WHERE k IN (1, 2, 3, 4, 5, 6, 7)"), "",
		"1 | 2 | null", "2 | null | null", "3 | null | 1", "4 | 1 | null", "5 | null | null", "6 | 1 | 6", "7 | null | null")
	exec(t, sess, "DELETE w FROM live WHERE k = 3 AND c = 1")
	time.Sleep(3100 * time.Millisecond)
	// 3 lost its last cell, 4 and 5 expired; 6's marker and v expired but
	// w, written without a TTL, keeps the row.
	wantRows(t, q("SELECT k, v, w FROM live WHERE k IN (1, 2, 3, 4, 5, 6, 7)"), "",
		"1 | 2 | null", "2 | null | null", "6 | null | 6", "7 | null | null")
}

// TestSemanticsTimestamps: USING TIMESTAMP, then the client's protocol
// timestamp, then the gateway's clock; older writes and deletes never
// override newer cells; on a tie a deletion wins, then an expiring cell,
// then the greater value.
func TestSemanticsTimestamps(t *testing.T) {
	sess := semanticsSession(t)
	q := sess.Query
	exec(t, sess, "CREATE TABLE ts (k int, c int, v int, w text, PRIMARY KEY (k, c))")

	// The protocol's timestamp, which gocql sends with every statement.
	if err := q("INSERT INTO ts (k, c, v) VALUES (1, 1, 1)").WithTimestamp(1234).Exec(); err != nil {
		t.Fatal(err)
	}
	// USING TIMESTAMP beats it.
	if err := q("UPDATE ts USING TIMESTAMP 777 SET w = 'a' WHERE k = 1 AND c = 1").WithTimestamp(99999).Exec(); err != nil {
		t.Fatal(err)
	}
	wantRows(t, q("SELECT writetime(v), writetime(w) FROM ts WHERE k = 1"), "", "1234 | 777")

	// Without one, the gateway's clock in microseconds.
	cfg := clusterConfig(gw, "sem")
	cfg.DefaultTimestamp = false
	noTS, err := cfg.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer noTS.Close()
	before := time.Now().UnixMicro()
	if err := noTS.Query("INSERT INTO ts (k, c, v) VALUES (2, 1, 1)").Exec(); err != nil {
		t.Fatal(err)
	}
	after := time.Now().UnixMicro()
	var wt int64
	if err := q("SELECT writetime(v) FROM ts WHERE k = 2").Scan(&wt); err != nil {
		t.Fatal(err)
	}
	if wt < before-1000 || wt > after+1000 {
		t.Errorf("gateway timestamp %d outside [%d, %d]", wt, before, after)
	}

	// Older writes and deletes lose, in either order of arrival.
	exec(t, sess,
		"UPDATE ts USING TIMESTAMP 20 SET v = 1 WHERE k = 3 AND c = 1",
		"UPDATE ts USING TIMESTAMP 10 SET v = 2 WHERE k = 3 AND c = 1",
		"DELETE v FROM ts USING TIMESTAMP 15 WHERE k = 3 AND c = 1",
		"DELETE FROM ts USING TIMESTAMP 19 WHERE k = 3 AND c = 1",
		"DELETE FROM ts USING TIMESTAMP 19 WHERE k = 3")
	wantRows(t, q("SELECT v, writetime(v) FROM ts WHERE k = 3"), "", "1 | 20")

	// Ties: the deletion wins whichever comes first.
	exec(t, sess,
		"UPDATE ts USING TIMESTAMP 30 SET v = 1 WHERE k = 4 AND c = 1",
		"DELETE v FROM ts USING TIMESTAMP 30 WHERE k = 4 AND c = 1",
		"DELETE v FROM ts USING TIMESTAMP 30 WHERE k = 4 AND c = 2",
		"UPDATE ts USING TIMESTAMP 30 SET v = 1 WHERE k = 4 AND c = 2")
	wantRows(t, q("SELECT c, v FROM ts WHERE k = 4"), "")
	// Then the expiring cell, whichever comes first.
	exec(t, sess,
		"UPDATE ts USING TIMESTAMP 40 AND TTL 1000 SET v = 1 WHERE k = 5 AND c = 1",
		"UPDATE ts USING TIMESTAMP 40 SET v = 2 WHERE k = 5 AND c = 1",
		"UPDATE ts USING TIMESTAMP 40 SET v = 2 WHERE k = 5 AND c = 2",
		"UPDATE ts USING TIMESTAMP 40 AND TTL 1000 SET v = 1 WHERE k = 5 AND c = 2")
	wantRows(t, q("SELECT c, v FROM ts WHERE k = 5"), "", "1 | 1", "2 | 1")
	// Then the greater value, compared as unsigned serialized bytes:
	// 'b' > 'a', 'ab' > 'a', and -1 (ff ff ff ff) > 1.
	exec(t, sess,
		"UPDATE ts USING TIMESTAMP 50 SET w = 'b', v = -1 WHERE k = 6 AND c = 1",
		"UPDATE ts USING TIMESTAMP 50 SET w = 'a', v = 1 WHERE k = 6 AND c = 1",
		"UPDATE ts USING TIMESTAMP 50 SET w = 'a' WHERE k = 6 AND c = 2",
		"UPDATE ts USING TIMESTAMP 50 SET w = 'ab' WHERE k = 6 AND c = 2")
	wantRows(t, q("SELECT c, v, w FROM ts WHERE k = 6"), "", "1 | -1 | b", "2 | null | ab")
}

// TestSemanticsServerTimestamps: writes that bring no timestamp get the
// gateway's, which never repeat, even for writes that arrive together in
// one read from the socket, and so share an arrival time.
func TestSemanticsServerTimestamps(t *testing.T) {
	sess := semanticsSession(t)
	exec(t, sess, "CREATE TABLE tsu (k int PRIMARY KEY, v int)")
	c := dialRaw(t)
	c.startup(4)
	const n = 100
	if _, err := c.nc.Write(insertFrames(t, "sem.tsu", 10, n, primitive.ConsistencyLevelQuorum)); err != nil {
		t.Fatal(err)
	}
	if got := answers(c, n); got["void"] != n {
		t.Fatalf("%d INSERTs answered %v", n, got)
	}
	iter := sess.Query("SELECT k, writetime(v) FROM tsu").Consistency(gocql.All).Iter()
	seen := map[int64]int{}
	var k int
	var ts int64
	for iter.Scan(&k, &ts) {
		if other, ok := seen[ts]; ok {
			t.Errorf("rows %d and %d were given the same timestamp %d", other, k, ts)
		}
		seen[ts] = k
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Errorf("read %d distinct timestamps, want %d", len(seen), n)
	}
}

// TestSemanticsTTL: TTL per cell and on INSERT's row marker; the table's
// default_time_to_live; TTL 0 or a null TTL never expires; an UNSET TTL
// takes the default; TTL(col) counts down; a new write resets a TTL.
func TestSemanticsTTL(t *testing.T) {
	sess := semanticsSession(t)
	q := sess.Query
	exec(t, sess, "CREATE TABLE ttl (k int PRIMARY KEY, v int, w int) WITH default_time_to_live = 1000",
		"INSERT INTO ttl (k, v) VALUES (1, 1)",
		"INSERT INTO ttl (k, v) VALUES (2, 1) USING TTL 0",
		"INSERT INTO ttl (k, v) VALUES (3, 1) USING TTL 50",
		"UPDATE ttl USING TTL 60 SET w = 1 WHERE k = 3")
	for k, ttl := range map[int]any{4: nil, 5: gocql.UnsetValue} {
		if err := q("INSERT INTO ttl (k, v) VALUES (?, 1) USING TTL ?", k, ttl).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	got := readText(t, q("SELECT k, ttl(v), ttl(w) FROM ttl WHERE k IN (1, 2, 3, 4, 5)"))
	want := []string{"1 | 1000 | null", "2 | null | null", "3 | 50 | 60", "4 | null | null", "5 | 1000 | null"}
	if len(got.rows) != len(want) {
		t.Fatalf("rows %q, want %q", got.rows, want)
	}
	for i, row := range got.rows {
		// A second may pass between the write and the read.
		if row != want[i] && row != countDown(want[i]) {
			t.Errorf("row %d: %q, want %q", i, row, want[i])
		}
	}

	// Expiry: the cell goes at once, the row with its marker.
	exec(t, sess, "CREATE TABLE ttl2 (k int PRIMARY KEY, v int, w int)",
		"INSERT INTO ttl2 (k, v, w) VALUES (1, 1, 1) USING TTL 1",
		"UPDATE ttl2 USING TTL 100 SET w = 2 WHERE k = 1",
		"INSERT INTO ttl2 (k, v) VALUES (2, 1) USING TTL 1",
		"INSERT INTO ttl2 (k, v) VALUES (3, 1) USING TTL 1",
		"UPDATE ttl2 SET v = 2 WHERE k = 3")
	time.Sleep(2100 * time.Millisecond)
	// 1: w was rewritten with a longer TTL; 3: v rewritten without one.
	wantRows(t, q("SELECT k, v, w FROM ttl2 WHERE k IN (1, 2, 3)"), "", "1 | null | 2", "3 | 2 | null")
}

// countDown lowers every number above 1 in a "a | b | c" row by one.
func countDown(row string) string {
	out := []byte{}
	for i, f := range splitRow(row) {
		if i > 0 {
			out = append(out, " | "...)
		}
		if n, err := strconv.Atoi(f); err == nil && n > 1 && i > 0 {
			f = strconv.Itoa(n - 1)
		}
		out = append(out, f...)
	}
	return string(out)
}

func splitRow(row string) []string {
	var fields []string
	start := 0
	for i := 0; i+3 <= len(row); i++ {
		if row[i:i+3] == " | " {
			fields = append(fields, row[start:i])
			start = i + 3
		}
	}
	return append(fields, row[start:])
}

// TestSemanticsDeletes: deletions of cells, rows, clustering prefixes,
// slices and whole partitions with their statics; each leaves newer writes
// in place; null deletes a cell and UNSET leaves it alone.
func TestSemanticsDeletes(t *testing.T) {
	sess := semanticsSession(t)
	q := sess.Query
	exec(t, sess, "CREATE TABLE del (k int, c1 int, c2 int, v int, s int static, PRIMARY KEY (k, c1, c2))")
	for c1 := 1; c1 <= 3; c1++ {
		for c2 := 1; c2 <= 3; c2++ {
			if err := q("INSERT INTO del (k, c1, c2, v, s) VALUES (1, ?, ?, 1, 1) USING TIMESTAMP 100", c1, c2).Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Newer writes that every deletion below must leave alone.
	exec(t, sess,
		"UPDATE del USING TIMESTAMP 300 SET v = 3 WHERE k = 1 AND c1 = 1 AND c2 = 1",
		"UPDATE del USING TIMESTAMP 300 SET v = 3 WHERE k = 1 AND c1 = 2 AND c2 = 3")
	exec(t, sess,
		"DELETE v FROM del USING TIMESTAMP 200 WHERE k = 1 AND c1 = 3 AND c2 = 3", // a cell
		"DELETE FROM del USING TIMESTAMP 200 WHERE k = 1 AND c1 = 3 AND c2 = 2",   // a row
		"DELETE FROM del USING TIMESTAMP 200 WHERE k = 1 AND c1 = 1",              // a prefix
		"DELETE FROM del USING TIMESTAMP 200 WHERE k = 1 AND c1 = 2 AND c2 >= 2")  // a slice
	wantRows(t, q("SELECT c1, c2, v, s FROM del WHERE k = 1"), "",
		"1 | 1 | 3 | 1", "2 | 1 | 1 | 1", "2 | 3 | 3 | 1", "3 | 1 | 1 | 1", "3 | 3 | null | 1")
	// Writes older than a range deletion arriving later stay shadowed.
	exec(t, sess, "INSERT INTO del (k, c1, c2, v) VALUES (1, 1, 2, 9) USING TIMESTAMP 150")
	wantRows(t, q("SELECT c2 FROM del WHERE k = 1 AND c1 = 1"), "", "1")

	// A partition deletion takes the statics and every row older than it.
	exec(t, sess, "DELETE FROM del USING TIMESTAMP 250 WHERE k = 1")
	wantRows(t, q("SELECT c1, c2, v, s FROM del WHERE k = 1"), "", "1 | 1 | 3 | null", "2 | 3 | 3 | null")

	// Null deletes a cell; UNSET leaves it alone.
	exec(t, sess, "INSERT INTO del (k, c1, c2, v, s) VALUES (2, 1, 1, 5, 5)")
	if err := q("INSERT INTO del (k, c1, c2, v, s) VALUES (2, 1, 1, ?, ?)", nil, gocql.UnsetValue).Exec(); err != nil {
		t.Fatal(err)
	}
	wantRows(t, q("SELECT v, s FROM del WHERE k = 2"), "", "null | 5")
	if err := q("UPDATE del SET v = ?, s = ? WHERE k = 2 AND c1 = 1 AND c2 = 1", gocql.UnsetValue, nil).Exec(); err != nil {
		t.Fatal(err)
	}
	wantRows(t, q("SELECT c1, v, s FROM del WHERE k = 2"), "", "1 | null | null")
}
