package gateway_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
	"github.com/gocql/gocql"
)

// wantCAS runs a conditional write and checks its result: the columns
// ("name type" joined by ", ") and the one row. The result carries its own
// metadata, which the driver asks for as it does for ScanCAS.
func wantCAS(t *testing.T, q *gocql.Query, cols, row string) {
	t.Helper()
	wantRows(t, q.NoSkipMetadata(), cols, row)
}

// TestWriteFeaturesStatic checks static columns: written by INSERT with a
// row or by UPDATE with the partition key alone, read back in every row of
// the partition, and a partition holding only static data.
func TestWriteFeaturesStatic(t *testing.T) {
	sess := featuresSession(t)
	exec(t, sess,
		"CREATE TABLE st (k int, c int, v int, s int static, s2 text static, PRIMARY KEY (k, c))",
		"INSERT INTO st (k, c, v, s) VALUES (1, 1, 10, 100)",
		"INSERT INTO st (k, c, v) VALUES (1, 2, 20)",
		"UPDATE st SET s2 = 'two' WHERE k = 1",
		"UPDATE st SET s = 300, s2 = 'only' WHERE k = 3")
	q := sess.Query
	wantRows(t, q("SELECT * FROM st WHERE k = 1"), "k int, c int, s int, s2 varchar, v int",
		"1 | 1 | 100 | two | 10", "1 | 2 | 100 | two | 20")
	wantRows(t, q("SELECT * FROM st WHERE k = 3"), "", "3 | null | 300 | only | null")
	wantRows(t, q("SELECT k, c, s FROM st WHERE k IN (1, 3)"), "", "1 | 1 | 100", "1 | 2 | 100", "3 | null | 300")
	// A restriction on rows leaves a partition without rows out.
	wantRows(t, q("SELECT * FROM st WHERE k = 3 AND c = 1"), "")
	wantRows(t, q("SELECT k, c, s FROM st WHERE k = 3 AND c > 0"), "")

	// The partition's static value changes in every row at once.
	exec(t, sess, "UPDATE st SET s = 101 WHERE k = 1")
	wantRows(t, q("SELECT c, s FROM st WHERE k = 1"), "", "1 | 101", "2 | 101")
	exec(t, sess, "INSERT INTO st (k, c, s) VALUES (1, 3, 102)")
	wantRows(t, q("SELECT c, s, v FROM st WHERE k = 1"), "", "1 | 102 | 10", "2 | 102 | 20", "3 | 102 | null")

	// Deleting rows keeps the static value; deleting it keeps the rows.
	exec(t, sess, "DELETE FROM st WHERE k = 1 AND c = 3", "DELETE s2 FROM st WHERE k = 1")
	wantRows(t, q("SELECT c, s, s2 FROM st WHERE k = 1"), "", "1 | 102 | null", "2 | 102 | null")
	exec(t, sess, "DELETE FROM st WHERE k = 1 AND c IN (1, 2)")
	wantRows(t, q("SELECT * FROM st WHERE k = 1"), "", "1 | null | 102 | null | null")
	exec(t, sess, "DELETE FROM st WHERE k = 1")
	wantRows(t, q("SELECT * FROM st WHERE k = 1"), "")

	var distinct []string
	for _, k := range byToken(2, 3) {
		distinct = append(distinct, map[int]string{2: "2 | null", 3: "3 | 300"}[k])
	}
	exec(t, sess, "INSERT INTO st (k, c, v) VALUES (2, 1, 1)")
	wantRows(t, q("SELECT DISTINCT k, s FROM st"), "k int, s int", distinct...)
	err := q("UPDATE st SET s = 1 WHERE k = 1 AND c = 1").Exec()
	requireCQLError(t, err, 0x2200, "Invalid restrictions on clustering columns since the UPDATE statement modifies only static columns")
	err = q("UPDATE st SET v = 1 WHERE k = 1").Exec()
	requireCQLError(t, err, 0x2200, "Some clustering keys are missing: c")
}

// TestWriteFeaturesCounters checks counter updates and reads.
func TestWriteFeaturesCounters(t *testing.T) {
	sess := featuresSession(t)
	exec(t, sess,
		"CREATE TABLE cnt (k int, c int, hits counter, misses counter, PRIMARY KEY (k, c))",
		"UPDATE cnt SET hits = hits + 1 WHERE k = 1 AND c = 1",
		"UPDATE cnt SET hits = hits + 1, misses = misses - 2 WHERE k = 1 AND c = 1",
		"UPDATE cnt SET misses = misses + 5 WHERE k = 1 AND c = 2")
	if err := sess.Query("UPDATE cnt SET hits = hits + ? WHERE k = ? AND c = ?", int64(40), 1, 1).Exec(); err != nil {
		t.Fatal(err)
	}
	q := sess.Query
	wantRows(t, q("SELECT * FROM cnt WHERE k = 1"), "k int, c int, hits counter, misses counter",
		"1 | 1 | 42 | -2", "1 | 2 | null | 5")
	wantRows(t, q("SELECT SUM(hits), MAX(misses), COUNT(*) FROM cnt WHERE k = 1"), "", "42 | 5 | 2")
	wantRows(t, q("SELECT hits FROM cnt WHERE k = 2"), "hits counter")
	err := q("UPDATE cnt SET hits = 5 WHERE k = 1 AND c = 1").Exec()
	requireCQLError(t, err, 0x2200, "Cannot set the value of counter column hits (counters can only be incremented/decremented, not set)")
	err = q("INSERT INTO cnt (k, c, hits) VALUES (1, 1, 1)").Exec()
	requireCQLError(t, err, 0x2200, "INSERT statements are not allowed on counter tables, use UPDATE instead")
	err = q("UPDATE cnt USING TTL 10 SET hits = hits + 1 WHERE k = 1 AND c = 1").Exec()
	requireCQLError(t, err, 0x2200, "Cannot provide custom TTL for counter updates")
	err = q("CREATE TABLE cnt2 (k int PRIMARY KEY, n counter, v int)").Exec()
	requireCQLError(t, err, 0x2200, "Cannot mix counter and non counter columns in the same table")
	err = q("CREATE TABLE cnt2 (k int PRIMARY KEY, n counter) WITH default_time_to_live = 10").Exec()
	requireCQLError(t, err, 0x2200, "Cannot set default_time_to_live on a table with counters")
}

// TestWriteFeaturesLWT checks the results of conditional writes: [applied]
// alone when applied, and with the values the conditions saw when not.
func TestWriteFeaturesLWT(t *testing.T) {
	sess := featuresSession(t)
	exec(t, sess, "CREATE TABLE lwt (k int, c int, v int, w text, s int static, PRIMARY KEY (k, c))")
	q := sess.Query
	applied := "[applied] boolean"

	wantCAS(t, q("INSERT INTO lwt (k, c, v, w) VALUES (1, 1, 10, 'a') IF NOT EXISTS"), applied, "true")
	// Refused: the existing row, every column in SELECT * order.
	wantCAS(t, q("INSERT INTO lwt (k, c, v, w) VALUES (1, 1, 11, 'b') IF NOT EXISTS"),
		applied+", k int, c int, s int, v int, w varchar", "false | 1 | 1 | null | 10 | a")
	wantCAS(t, q("UPDATE lwt SET v = 12 WHERE k = 1 AND c = 1 IF EXISTS"), applied, "true")
	wantCAS(t, q("UPDATE lwt SET v = 12 WHERE k = 1 AND c = 2 IF EXISTS"), applied, "false")
	wantCAS(t, q("UPDATE lwt SET v = 13 WHERE k = 1 AND c = 1 IF v = 12"), applied, "true")
	// Refused: the columns of the conditions, in the order written.
	wantCAS(t, q("UPDATE lwt SET v = 14 WHERE k = 1 AND c = 1 IF w = 'a' AND v = 12"),
		applied+", w varchar, v int", "false | a | 13")
	wantCAS(t, q("UPDATE lwt SET v = 14 WHERE k = 1 AND c = 1 IF v IN (1, 2) AND v > 0"), applied+", v int", "false | 13")
	wantCAS(t, q("UPDATE lwt SET v = 14 WHERE k = 1 AND c = 2 IF v = 12"), applied, "false")
	wantCAS(t, q("UPDATE lwt SET v = ? WHERE k = ? AND c = ? IF v = ?", 14, 1, 1, 13), applied, "true")
	wantCAS(t, q("DELETE FROM lwt WHERE k = 1 AND c = 1 IF v = 1"), applied+", v int", "false | 14")
	wantCAS(t, q("DELETE FROM lwt WHERE k = 1 AND c = 1 IF EXISTS"), applied, "true")
	wantCAS(t, q("DELETE FROM lwt WHERE k = 1 AND c = 1 IF EXISTS"), applied, "false")
	wantRows(t, q("SELECT * FROM lwt WHERE k = 1"), "")

	// Static conditions need the partition key only.
	wantCAS(t, q("INSERT INTO lwt (k, c, v, s) VALUES (2, 1, 1, 7) IF NOT EXISTS"), applied, "true")
	wantCAS(t, q("UPDATE lwt SET s = 8 WHERE k = 2 IF s = 7"), applied, "true")
	wantCAS(t, q("UPDATE lwt SET s = 9 WHERE k = 2 IF s = 7"), applied+", s int", "false | 8")
	wantCAS(t, q("UPDATE lwt SET s = 9, v = 2 WHERE k = 2 AND c = 1 IF s = 8 AND v = 1"), applied, "true")
	wantRows(t, q("SELECT k, c, s, v FROM lwt WHERE k = 2"), "", "2 | 1 | 9 | 2")
	// Refused: regular columns first, then static ones.
	wantCAS(t, q("UPDATE lwt SET v = 3 WHERE k = 2 AND c = 1 IF s = 0 AND w = 'a' AND v = 0"),
		applied+", w varchar, v int, s int", "false | null | 2 | 9")

	// ScanCAS and MapScanCAS read the same results. A write that changes
	// no static column does not fetch them: s shows as null.
	var k, c, v int
	var s *int
	var w string
	ok, err := q("INSERT INTO lwt (k, c, v, w) VALUES (2, 1, 5, 'x') IF NOT EXISTS").ScanCAS(&k, &c, &s, &v, &w)
	if err != nil || ok || k != 2 || c != 1 || s != nil || v != 2 || w != "" {
		t.Errorf("ScanCAS: applied %v, %d %d %v %d %q, %v", ok, k, c, s, v, w, err)
	}
	m := map[string]any{}
	ok, err = q("UPDATE lwt SET v = 3 WHERE k = 2 AND c = 1 IF v = 1").MapScanCAS(m)
	if err != nil || ok || len(m) != 1 || m["v"] != 2 {
		t.Errorf("MapScanCAS: applied %v, %v, %v", ok, m, err)
	}
	err = q("INSERT INTO lwt (k, c, v) VALUES (3, 1, 1) IF NOT EXISTS USING TIMESTAMP 5").Exec()
	requireCQLError(t, err, 0x2200, "Cannot provide custom timestamp for conditional updates")
}

// TestWriteFeaturesInsertJSON checks INSERT JSON, DEFAULT NULL against
// DEFAULT UNSET, and SELECT JSON reading the values back.
func TestWriteFeaturesInsertJSON(t *testing.T) {
	sess := featuresSession(t)
	exec(t, sess,
		`CREATE TABLE js (k int PRIMARY KEY, v int, "Cap" text, l list<int>, m map<int, text>, ts timestamp,
			b blob, u uuid, d duration, tu tuple<int, text>, dec decimal, vi varint, f float)`,
		`INSERT INTO js JSON '{"k": 1, "v": 5, "\"Cap\"": "x", "l": [1, 2], "m": {"2": "b", "1": "a"},
			"ts": "2020-01-02 03:04:05.678Z", "b": "0x0102", "u": "41d01b63-244e-435d-bd6d-5dc8a0addb8c",
			"d": "1h30m", "tu": [1, "a"], "dec": "1.50", "vi": 12345678901234567890, "f": 1.5}'`)
	q := sess.Query
	wantRows(t, q("SELECT JSON * FROM js WHERE k = 1"), "[json] varchar",
		`{"k": 1, "\"Cap\"": "x", "b": "0x0102", "d": "1h30m", "dec": 1.50, "f": 1.5, "l": [1, 2], "m": {"1": "a", "2": "b"}, `+
			`"ts": "2020-01-02 03:04:05.678Z", "tu": [1, "a"], "u": "41d01b63-244e-435d-bd6d-5dc8a0addb8c", "v": 5, `+
			`"vi": 12345678901234567890}`)
	wantRows(t, q(`SELECT k, v, "Cap", l, m, ts, b, d, tu, dec FROM js WHERE k = 1`), "",
		"1 | 5 | x | [1 2] | map[1:a 2:b] | 2020-01-02 03:04:05.678Z | 0x0102 | {0 0 5400000000000} | 1 | a | 1.50")

	// DEFAULT UNSET leaves the columns the object omits alone; DEFAULT
	// NULL, the default, nulls them.
	exec(t, sess, `INSERT INTO js JSON '{"k": 1, "v": 6}' DEFAULT UNSET`)
	wantRows(t, q(`SELECT v, "Cap", l FROM js WHERE k = 1`), "", "6 | x | [1 2]")
	exec(t, sess, `INSERT INTO js JSON '{"k": 1, "v": 7}' DEFAULT NULL`)
	wantRows(t, q(`SELECT v, "Cap", l FROM js WHERE k = 1`), "", "7 | null | null")
	exec(t, sess, `INSERT INTO js JSON '{"k": 1, "\"Cap\"": "y"}'`)
	wantRows(t, q(`SELECT JSON k, v, "Cap" FROM js WHERE k = 1`), "", `{"k": 1, "v": null, "\"Cap\"": "y"}`)

	if err := q("INSERT INTO js JSON ? USING TTL 100", `{"k": 2, "v": 8}`).Exec(); err != nil {
		t.Fatal(err)
	}
	var ttl int
	if err := q("SELECT ttl(v) FROM js WHERE k = 2").Scan(&ttl); err != nil || ttl < 99 || ttl > 100 {
		t.Errorf("ttl after INSERT JSON USING TTL 100: %d %v", ttl, err)
	}
	err := q(`INSERT INTO js JSON '{"k": 3, "nope": 1}'`).Exec()
	requireCQLError(t, err, 0x2200, "JSON values map contains unrecognized column: nope")
	err = q(`INSERT INTO js JSON '{"k": 3, "v": "x"}'`).Exec()
	requireCQLError(t, err, 0x2200, "Error decoding JSON value for v: Unable to make int from 'x'")
	err = q(`INSERT INTO js JSON ?`, `{"k": 3, "v": "x"}`).Exec()
	requireCQLError(t, err, 0x2200, "Error decoding JSON value for v: Unable to make int from 'x'")
	err = q(`INSERT INTO js JSON '[1]'`).Exec()
	requireCQLError(t, err, 0x2200, "Could not decode JSON string as a map: the text is not a JSON object. (String was: [1])")
	err = q(`INSERT INTO js JSON ?`, nil).Exec()
	requireCQLError(t, err, 0x2200, "Got null for INSERT JSON values")
}

// TestWriteFeaturesTimestamps checks USING TTL and USING TIMESTAMP: the
// write with the higher timestamp wins, whatever the order of arrival.
func TestWriteFeaturesTimestamps(t *testing.T) {
	sess := featuresSession(t)
	exec(t, sess,
		"CREATE TABLE tsw (k int, c int, v int, w int, PRIMARY KEY (k, c))",
		"INSERT INTO tsw (k, c, v, w) VALUES (1, 1, 1, 1) USING TIMESTAMP 2000",
		"INSERT INTO tsw (k, c, v, w) VALUES (1, 1, 2, 2) USING TIMESTAMP 1000",
		"UPDATE tsw USING TIMESTAMP 3000 SET w = 3 WHERE k = 1 AND c = 1",
		"UPDATE tsw USING TIMESTAMP 2500 SET w = 4 WHERE k = 1 AND c = 1",
		"DELETE v FROM tsw USING TIMESTAMP 1500 WHERE k = 1 AND c = 1")
	q := sess.Query
	wantRows(t, q("SELECT v, writetime(v), w, writetime(w) FROM tsw WHERE k = 1"),
		"v int, writetime(v) bigint, w int, writetime(w) bigint", "1 | 2000 | 3 | 3000")
	exec(t, sess, "DELETE FROM tsw USING TIMESTAMP 2000 WHERE k = 1 AND c = 1")
	wantRows(t, q("SELECT v, w FROM tsw WHERE k = 1"), "", "null | 3")
	exec(t, sess, "DELETE FROM tsw USING TIMESTAMP 3000 WHERE k = 1")
	wantRows(t, q("SELECT v, w FROM tsw WHERE k = 1"), "")

	exec(t, sess,
		"INSERT INTO tsw (k, c, v) VALUES (2, 1, 1) USING TTL 1000 AND TIMESTAMP 10",
		"UPDATE tsw USING TTL 500 SET w = 1 WHERE k = 2 AND c = 1")
	got := readText(t, q("SELECT writetime(v), ttl(v), ttl(w) FROM tsw WHERE k = 2"))
	if len(got.rows) != 1 || !slices.Contains([]string{"10 | 1000 | 500", "10 | 999 | 499", "10 | 999 | 500", "10 | 1000 | 499"}, got.rows[0]) {
		t.Errorf("TTLs: %q", got.rows)
	}
	// A TTL of 0 never expires.
	exec(t, sess, "UPDATE tsw USING TTL 0 SET v = 2 WHERE k = 2 AND c = 1")
	wantRows(t, q("SELECT v, ttl(v) FROM tsw WHERE k = 2"), "", "2 | null")
	if err := q("INSERT INTO tsw (k, c, v) VALUES (?, ?, ?) USING TTL ? AND TIMESTAMP ?", 3, 1, 1, 1, int64(5)).Exec(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond)
	wantRows(t, q("SELECT v FROM tsw WHERE k = 3"), "")
	err := q("INSERT INTO tsw (k, c, v) VALUES (4, 1, 1) USING TTL -1").Exec()
	requireCQLError(t, err, 0x2200, "A TTL must be greater or equal to 0, but was -1")
}

// TestWriteFeaturesStatements checks TRUNCATE, USE, bind markers, comments
// and literals.
func TestWriteFeaturesStatements(t *testing.T) {
	sess := featuresSession(t)
	exec(t, sess, `CREATE TABLE lit (k int, c int, t text, b blob, u uuid, tu timeuuid, d duration, f float, db double,
		i inet, dt date, tm time, ts timestamp, bo boolean, PRIMARY KEY (k, c))`)
	q := sess.Query

	t.Run("Literals", func(t *testing.T) {
		exec(t, sess,
			`INSERT INTO lit (k, c, t, b, u, tu, d, f, db, i, dt, tm, ts, bo) VALUES (1, 1, $$it's a "$" string$$, 0xCAFE,
				41d01b63-244e-435d-bd6d-5dc8a0addb8c, e23f1e00-53a6-11e2-8080-808080808080, 1y2mo3w4d5h6m7s8ms9us10ns,
				NaN, -Infinity, '10.0.0.1', '2021-03-04', '01:02:03.5', '2020-01-02 03:04:05+0000', true)`,
			`INSERT INTO lit (k, c, t, b, d, f, db) VALUES (1, 2, 'it''s', 0x, P1DT2H, Infinity, NaN)`,
			`INSERT INTO lit (k, c, d, f, db) VALUES (1, 3, -2h, -0.0, 1e300)`)
		wantRows(t, q("SELECT t, b, u, tu, d, i, dt, tm, ts, bo FROM lit WHERE k = 1 AND c = 1"),
			"t varchar, b blob, u uuid, tu timeuuid, d duration, i inet, dt date, tm time, ts timestamp, bo boolean",
			`it's a "$" string | 0xcafe | 41d01b63-244e-435d-bd6d-5dc8a0addb8c | e23f1e00-53a6-11e2-8080-808080808080 | `+
				`{14 25 18367008009010} | 10.0.0.1 | 2021-03-04 00:00:00.000Z | 1h2m3.5s | 2020-01-02 03:04:05.000Z | true`)
		wantRows(t, q("SELECT t, b, d FROM lit WHERE k = 1 AND c = 2"), "", "it's | 0x | {0 1 7200000000000}")
		var f float32
		var db float64
		if err := q("SELECT f, db FROM lit WHERE k = 1 AND c = 1").Scan(&f, &db); err != nil || !math.IsNaN(float64(f)) || !math.IsInf(db, -1) {
			t.Errorf("NaN, -Infinity read back as %v %v %v", f, db, err)
		}
		if err := q("SELECT f, db FROM lit WHERE k = 1 AND c = 2").Scan(&f, &db); err != nil || !math.IsInf(float64(f), 1) || !math.IsNaN(db) {
			t.Errorf("Infinity, NaN read back as %v %v %v", f, db, err)
		}
		if err := q("SELECT f, db FROM lit WHERE k = 1 AND c = 3").Scan(&f, &db); err != nil || math.Float32bits(f) != 0x80000000 || db != 1e300 {
			t.Errorf("-0.0, 1e300 read back as %v %v %v", f, db, err)
		}
		wantRows(t, q("SELECT JSON f, db, d FROM lit WHERE k = 1 AND c = 2"), "", `{"f": null, "db": null, "d": "1d2h"}`)
		wantRows(t, q("SELECT d FROM lit WHERE k = 1 AND c = 3"), "", "{0 0 -7200000000000}")
	})

	t.Run("BindMarkers", func(t *testing.T) {
		if err := q("INSERT INTO lit (k, c, t, bo) VALUES (:k, 5, ?, :flag)", 2, "named", false).Exec(); err != nil {
			t.Fatal(err)
		}
		err := q("UPDATE lit SET t = :t WHERE k = :k AND c IN (5, :c)",
			gocql.NamedValue("t", "by name"), gocql.NamedValue("c", 6), gocql.NamedValue("k", 2)).Exec()
		if err != nil {
			t.Fatal(err)
		}
		wantRows(t, q("SELECT c, t, bo FROM lit WHERE k = :k AND c >= ? AND c <= 6", 2, 5), "", "5 | by name | false", "6 | by name | null")
		wantRows(t, q("SELECT c, t FROM lit WHERE k = ? LIMIT :n", 2, 1), "", "5 | by name")
	})

	t.Run("Comments", func(t *testing.T) {
		exec(t, sess, "INSERT INTO lit (k, c, t) -- a comment\n VALUES (3, 1, 'x') // another\n",
			"/* a\nblock */ UPDATE lit SET t = 'y' /* inline */ WHERE k = 3 AND c = 2;")
		wantRows(t, q("SELECT c, t FROM lit WHERE k = 3 -- trailing"), "", "1 | x", "2 | y")
	})

	t.Run("Truncate", func(t *testing.T) {
		exec(t, sess, "CREATE TABLE trunc (k int PRIMARY KEY, v int)")
		for k := range 5 {
			exec(t, sess, fmt.Sprintf("INSERT INTO trunc (k, v) VALUES (%d, %d)", k, k))
		}
		exec(t, sess, "TRUNCATE trunc")
		wantRows(t, q("SELECT * FROM trunc"), "k int, v int")
		exec(t, sess, "INSERT INTO trunc (k, v) VALUES (1, 1)", "TRUNCATE TABLE features.trunc")
		wantRows(t, q("SELECT COUNT(*) FROM trunc"), "", "0")
		err := q("TRUNCATE nope").Exec()
		requireCQLError(t, err, 0x2200, "table nope does not exist")
	})

	t.Run("Use", func(t *testing.T) {
		exec(t, sess,
			`CREATE KEYSPACE IF NOT EXISTS "FeaturesCase" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
			`CREATE TABLE "FeaturesCase".t (k int PRIMARY KEY, v int)`,
			`INSERT INTO "FeaturesCase".t (k, v) VALUES (1, 2)`)
		// The driver sends USE "FeaturesCase" on each connection.
		wantRows(t, session(t, "FeaturesCase").Query("SELECT v FROM t WHERE k = 1"), "v int", "2")

		c := dialRaw(t)
		c.startup(primitive.ProtocolVersion4)
		for i, tc := range []struct{ use, keyspace, err string }{
			{"USE features", "features", ""},
			{`USE "FeaturesCase"`, "FeaturesCase", ""},
			{"USE FeaturesCase", "", "Keyspace 'featurescase' does not exist"},
			{"use features;", "features", ""},
		} {
			c.sendMessage(primitive.ProtocolVersion4, int16(10+i), &message.Query{Query: tc.use, Options: &message.QueryOptions{}})
			switch m := c.receive().Body.Message.(type) {
			case *message.SetKeyspaceResult:
				if m.Keyspace != tc.keyspace || tc.err != "" {
					t.Errorf("%s: SET_KEYSPACE %q", tc.use, m.Keyspace)
				}
			case *message.Invalid:
				if m.ErrorMessage != tc.err {
					t.Errorf("%s: error %q, want %q", tc.use, m.ErrorMessage, tc.err)
				}
			default:
				t.Errorf("%s: got %T", tc.use, m)
			}
		}
		c.sendMessage(primitive.ProtocolVersion4, 20, &message.Query{Query: "SELECT c, t FROM lit WHERE k = 3",
			Options: &message.QueryOptions{Consistency: primitive.ConsistencyLevelOne}})
		if rows, ok := c.receive().Body.Message.(*message.RowsResult); !ok || len(rows.Data) != 2 {
			t.Errorf("unqualified SELECT after USE: %v", rows)
		}
	})
}

// TestWriteFeaturesCollections checks that collections, tuples and frozen
// user types read back as written.
func TestWriteFeaturesCollections(t *testing.T) {
	sess := featuresSession(t)
	exec(t, sess,
		`CREATE TYPE IF NOT EXISTS address (street text, "Zip" int, tags frozen<set<text>>)`,
		`CREATE TABLE colw (k int PRIMARY KEY, l list<text>, s set<int>, m map<text, int>, tp tuple<int, text, boolean>,
			ad frozen<address>, ads list<frozen<address>>, fl frozen<list<int>>, nested map<text, frozen<list<int>>>)`,
		`INSERT INTO colw (k, l, s, m, tp, ad, ads, fl, nested) VALUES (1, ['b', 'a', 'b'], {3, 1, 2}, {'y': 2, 'x': 1},
			(1, 'one', true), {street: 'Main', "Zip": 123, tags: {'t2', 't1'}}, [{street: 'A', "Zip": 1}],
			[3, 1], {'k': [1, 2]})`,
		`INSERT INTO colw (k, l, s, m) VALUES (2, [], {}, {})`)
	q := sess.Query
	wantRows(t, q("SELECT l, s, m, tp, fl, nested FROM colw WHERE k = 1"),
		"l list(varchar), s set(int), m map(varchar, int), tp tuple(int, varchar, boolean), fl list(int), nested map(varchar, list(int))",
		"[b a b] | [1 2 3] | map[x:1 y:2] | 1 | one | true | [3 1] | map[k:[1 2]]")
	wantRows(t, q("SELECT ad, ads FROM colw WHERE k = 1"), "",
		"map[Zip:123 street:Main tags:[t1 t2]] | [map[Zip:1 street:A tags:[]]]")
	wantRows(t, q(`SELECT ad.street, ad."Zip", ad.tags FROM colw WHERE k = 1`), `ad.street varchar, ad.Zip int, ad.tags set(varchar)`,
		"Main | 123 | [t1 t2]")
	wantRows(t, q("SELECT JSON ad, ads, tp, m, s FROM colw WHERE k = 1"), "",
		`{"ad": {"street": "Main", "\"Zip\"": 123, "tags": ["t1", "t2"]}, "ads": [{"street": "A", "\"Zip\"": 1, "tags": null}], `+
			`"tp": [1, "one", true], "m": {"x": 1, "y": 2}, "s": [1, 2, 3]}`)
	// Empty collections are no value at all.
	wantRows(t, q("SELECT JSON l, s, m FROM colw WHERE k = 2"), "", `{"l": null, "s": null, "m": null}`)
	wantRows(t, q("SELECT k FROM colw WHERE k = 2"), "", "2")

	// Bound values round-trip too.
	err := q("INSERT INTO colw (k, l, s, m, tp, ad) VALUES (?, ?, ?, ?, (2, 'two', false), ?)", 3, []string{"z"}, []int{9, 8},
		map[string]int{"a": 1}, map[string]any{"street": "S", "Zip": 5}).Exec()
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, q("SELECT l, s, m, tp, ad FROM colw WHERE k = 3"), "",
		"[z] | [8 9] | map[a:1] | 2 | two | false | map[Zip:5 street:S tags:[]]")
	wantRows(t, q("SELECT JSON ad FROM colw WHERE k = 3"), "", `{"ad": {"street": "S", "\"Zip\"": 5, "tags": null}}`)
}
