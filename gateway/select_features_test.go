package gateway_test

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"

	"github.com/cqlpg/cqlpg/sharding"
)

// The feature tests run in the keyspace "features", created once, with a
// replication factor of 2 so that reads pick among replicas.
var featuresOnce sync.Once

// featuresSession returns a session whose keyspace is "features".
func featuresSession(t *testing.T) *gocql.Session {
	t.Helper()
	featuresOnce.Do(func() {
		exec(t, session(t, ""), "CREATE KEYSPACE IF NOT EXISTS features WITH replication = "+
			"{'class': 'SimpleStrategy', 'replication_factor': 2}")
	})
	return session(t, "features")
}

// rowsText is a result rendered as text: each column as "name type", each
// row as its values joined by " | ", with null as "null".
type rowsText struct {
	cols []string
	rows []string
}

// readText runs q and renders its result. Each value is scanned into a
// pointer to a pointer, which gocql leaves nil for null.
func readText(t *testing.T, q *gocql.Query) rowsText {
	t.Helper()
	out, _ := readPage(t, q)
	return out
}

// readPage runs q and renders its result as readText does, returning the
// paging state too; with a paging state set on q, it reads one page.
func readPage(t *testing.T, q *gocql.Query) (rowsText, []byte) {
	t.Helper()
	iter := q.Iter()
	var out rowsText
	var dests []any
	for _, c := range iter.Columns() {
		out.cols = append(out.cols, c.Name+" "+fmt.Sprint(c.TypeInfo))
		elems := []gocql.TypeInfo{c.TypeInfo}
		if tt, ok := c.TypeInfo.(gocql.TupleTypeInfo); ok {
			elems = tt.Elems
		}
		for _, e := range elems {
			v, err := e.NewWithError()
			if err != nil {
				t.Fatalf("%s: column %s: %v", q.Statement(), c.Name, err)
			}
			dests = append(dests, reflect.New(reflect.TypeOf(v)).Interface())
		}
	}
	for iter.Scan(dests...) {
		vals := make([]string, len(dests))
		for i, d := range dests {
			vals[i] = cqlText(reflect.ValueOf(d).Elem())
		}
		out.rows = append(out.rows, strings.Join(vals, " | "))
	}
	state := iter.PageState()
	if err := iter.Close(); err != nil {
		t.Fatalf("%s: %v", q.Statement(), err)
	}
	return out, state
}

// cqlText renders a scanned value: v is a pointer, nil for null.
func cqlText(v reflect.Value) string {
	if v.IsNil() {
		return "null"
	}
	switch x := v.Elem().Interface().(type) {
	case []byte:
		return "0x" + hex.EncodeToString(x)
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.000Z")
	case gocql.UUID:
		return x.String()
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}

// wantRows checks the rows of a query, and its columns ("name type" joined
// by ", ") unless cols is empty.
func wantRows(t *testing.T, q *gocql.Query, cols string, rows ...string) {
	t.Helper()
	got := readText(t, q)
	if cols != "" && strings.Join(got.cols, ", ") != cols {
		t.Errorf("%s: columns\n got %s\nwant %s", q.Statement(), strings.Join(got.cols, ", "), cols)
	}
	if !slices.Equal(got.rows, rows) {
		t.Errorf("%s: rows\n got %q\nwant %q", q.Statement(), got.rows, rows)
	}
}

// intToken is the token of an int partition key.
func intToken(k int) int64 {
	return int64(sharding.KeyToken([][]byte{binary.BigEndian.AppendUint32(nil, uint32(k))}))
}

// byToken sorts int partition keys in token order, the order of a scan.
func byToken(keys ...int) []int {
	out := slices.Clone(keys)
	sort.Slice(out, func(i, j int) bool { return intToken(out[i]) < intToken(out[j]) })
	return out
}

// TestSelectFeatures checks the selection clause: *, aliases, DISTINCT,
// JSON, casts, aggregates, WRITETIME/TTL, token() and native functions.
func TestSelectFeatures(t *testing.T) {
	sess := featuresSession(t)
	exec(t, sess,
		`CREATE TABLE sel (k int, c int, v int, s int static, "Name" text, PRIMARY KEY (k, c))`,
		`INSERT INTO sel (k, c, v, s, "Name") VALUES (1, 1, 10, 100, 'a')`,
		`INSERT INTO sel (k, c, v, "Name") VALUES (1, 2, 20, 'b')`,
		`INSERT INTO sel (k, c, v) VALUES (2, 1, 30)`,
		`UPDATE sel SET s = 300 WHERE k = 3`)
	order := byToken(1, 2, 3)
	q := sess.Query

	t.Run("Star", func(t *testing.T) {
		// Key columns, then static, then regular ones by name bytes.
		wantRows(t, q("SELECT * FROM sel WHERE k = 1"), "k int, c int, s int, Name varchar, v int",
			"1 | 1 | 100 | a | 10", "1 | 2 | 100 | b | 20")
		wantRows(t, q("SELECT * FROM sel WHERE k = 3"), "", "3 | null | 300 | null | null")
		wantRows(t, q("SELECT * FROM sel WHERE k = 4"), "k int, c int, s int, Name varchar, v int")
	})

	t.Run("Aliases", func(t *testing.T) {
		wantRows(t, q(`SELECT k AS key, v AS "Val", "Name" AS n, c AS "C" FROM sel WHERE k = 1 AND c = 2`),
			"key int, Val int, n varchar, C int", "1 | 20 | b | 2")
		wantRows(t, q(`SELECT token(k) AS t, ttl(v) AS l, CAST(v AS text) AS s, MAX(v) AS "M" FROM sel WHERE k = 2`),
			"t bigint, l int, s varchar, M int", fmt.Sprintf("%d | null | 30 | 30", intToken(2)))
	})

	t.Run("Distinct", func(t *testing.T) {
		var want []string
		for _, k := range order {
			want = append(want, map[int]string{1: "1 | 100", 2: "2 | null", 3: "3 | 300"}[k])
		}
		wantRows(t, q("SELECT DISTINCT k, s FROM sel"), "k int, s int", want...)
		var keys []string
		for _, k := range order {
			keys = append(keys, strconv.Itoa(k))
		}
		wantRows(t, q("SELECT DISTINCT k FROM sel"), "k int", keys...)
		wantRows(t, q("SELECT DISTINCT s FROM sel WHERE k = 1"), "s int", "100")
		wantRows(t, q("SELECT DISTINCT k, s FROM sel WHERE k IN (3, 1, 4)"), "", "1 | 100", "3 | 300")
		wantRows(t, q("SELECT DISTINCT k FROM sel LIMIT 2"), "", keys[:2]...)
	})

	t.Run("JSON", func(t *testing.T) {
		wantRows(t, q("SELECT JSON * FROM sel WHERE k = 1"), "[json] varchar",
			`{"k": 1, "c": 1, "s": 100, "\"Name\"": "a", "v": 10}`,
			`{"k": 1, "c": 2, "s": 100, "\"Name\"": "b", "v": 20}`)
		wantRows(t, q(`SELECT JSON k AS "Key", "Name", c AS lower, token(k), ttl(v) FROM sel WHERE k = 1 AND c = 1`), "",
			fmt.Sprintf(`{"\"Key\"": 1, "\"Name\"": "a", "lower": 1, "system.token(k)": %d, "ttl(v)": null}`, intToken(1)))
		wantRows(t, q("SELECT JSON k, s, v FROM sel WHERE k = 3"), "", `{"k": 3, "s": 300, "v": null}`)
		wantRows(t, q("SELECT JSON COUNT(*), MAX(v) FROM sel WHERE k = 1"), "[json] varchar",
			`{"count": 2, "system.max(v)": 20}`)
	})

	t.Run("Cast", func(t *testing.T) {
		wantRows(t, q("SELECT CAST(v AS text), CAST(v AS double), CAST(k AS bigint), CAST(v AS int) FROM sel WHERE k = 1 AND c = 2"),
			"cast(v as text) varchar, cast(v as double) double, cast(k as bigint) bigint, v int",
			"20 | 20 | 1 | 20")
	})

	t.Run("Count", func(t *testing.T) {
		// A selection without regular columns reads partitions that hold
		// only static data as rows, and count(*) counts them.
		wantRows(t, q("SELECT COUNT(*), COUNT(1), COUNT(v), COUNT(s) FROM sel"),
			"count bigint, count bigint, system.count(v) bigint, system.count(s) bigint", "4 | 4 | 3 | 3")
		wantRows(t, q("SELECT COUNT(*) FROM sel WHERE k = 1"), "count bigint", "2")
		wantRows(t, q("SELECT count(*) FROM sel WHERE k = 3"), "count bigint", "1")
		wantRows(t, q("SELECT COUNT(*) FROM sel WHERE k = 9"), "count bigint", "0")
		wantRows(t, q("SELECT k, c FROM sel WHERE k = 3"), "k int, c int", "3 | null")
	})

	t.Run("Aggregates", func(t *testing.T) {
		wantRows(t, q("SELECT MIN(v), MAX(v), SUM(v), AVG(v), MAX(\"Name\") FROM sel WHERE k = 1"),
			"system.min(v) int, system.max(v) int, system.sum(v) int, system.avg(v) int, system.max(Name) varchar",
			"10 | 20 | 30 | 15 | b")
		// Over no rows: count and sum are 0, the others null; a plain
		// column with them takes the value of the group's first row.
		wantRows(t, q("SELECT MIN(v), MAX(v), SUM(v), AVG(v), COUNT(v), k FROM sel WHERE k = 9"), "",
			"null | null | 0 | 0 | 0 | null")
		wantRows(t, q("SELECT k, c, MAX(v) FROM sel WHERE k = 1"), "k int, c int, system.max(v) int", "1 | 1 | 20")
	})

	t.Run("WritetimeTTLToken", func(t *testing.T) {
		exec(t, sess, "INSERT INTO sel (k, c, v) VALUES (5, 1, 1) USING TIMESTAMP 1234 AND TTL 1000")
		got := readText(t, q("SELECT writetime(v), ttl(v), token(k), writetime(\"Name\"), ttl(\"Name\") FROM sel WHERE k = 5"))
		if want := "writetime(v) bigint, ttl(v) int, system.token(k) bigint, writetime(Name) bigint, ttl(Name) int"; strings.Join(got.cols, ", ") != want {
			t.Errorf("columns %v, want %s", got.cols, want)
		}
		for _, ttl := range []int{1000, 999} {
			if slices.Equal(got.rows, []string{fmt.Sprintf("1234 | %d | %d | null | null", ttl, intToken(5))}) {
				return
			}
		}
		t.Errorf("rows %q", got.rows)
	})

	t.Run("TimeFunctions", func(t *testing.T) {
		before := time.Now().Add(-time.Second)
		var now, cur gocql.UUID
		var ts, curTS, dateOf time.Time
		var date, curDate time.Time
		var unix, unixOf int64
		var tod time.Duration
		var random gocql.UUID
		err := q(`SELECT now(), toTimestamp(now()), toDate(now()), toUnixTimestamp(now()), currentTimestamp(),
			currentDate(), currentTime(), currentTimeuuid(), dateOf(now()), unixTimestampOf(now()), uuid()
			FROM sel WHERE k = 1 AND c = 1`).Scan(&now, &ts, &date, &unix, &curTS, &curDate, &tod, &cur, &dateOf, &unixOf, &random)
		if err != nil {
			t.Fatal(err)
		}
		after := time.Now().Add(time.Second)
		for name, v := range map[string]time.Time{"now()": now.Time(), "toTimestamp": ts, "currentTimestamp": curTS,
			"currentTimeuuid": cur.Time(), "dateOf": dateOf, "toUnixTimestamp": time.UnixMilli(unix), "unixTimestampOf": time.UnixMilli(unixOf)} {
			if v.Before(before) || v.After(after) {
				t.Errorf("%s = %v, want about %v", name, v, before)
			}
		}
		if now.Version() != 1 || cur.Version() != 1 || random.Version() != 4 {
			t.Errorf("uuid versions: now %d, currentTimeuuid %d, uuid %d", now.Version(), cur.Version(), random.Version())
		}
		today := time.Now().UTC().Truncate(24 * time.Hour)
		if !date.Equal(today) && !date.Equal(today.Add(-24*time.Hour)) || !curDate.Equal(date) {
			t.Errorf("toDate(now()) = %v, currentDate() = %v", date, curDate)
		}
		if tod < 0 || tod >= 24*time.Hour {
			t.Errorf("currentTime() = %v", tod)
		}
		wantRows(t, q(`SELECT minTimeuuid('2013-01-01 00:05+0000'), maxTimeuuid('2013-01-01 00:05+0000'),
			toTimestamp(minTimeuuid('2013-01-01 00:05+0000')), toUnixTimestamp(maxTimeuuid('2013-01-01 00:05+0000')),
			toDate('2013-01-01 00:05+0000') FROM sel WHERE k = 1 AND c = 1`),
			"system.mintimeuuid('2013-01-01 00:05+0000') timeuuid, system.maxtimeuuid('2013-01-01 00:05+0000') timeuuid, "+
				"system.totimestamp(system.mintimeuuid('2013-01-01 00:05+0000')) timestamp, "+
				"system.tounixtimestamp(system.maxtimeuuid('2013-01-01 00:05+0000')) bigint, "+
				"system.todate('2013-01-01 00:05+0000') date",
			"e23f1e00-53a6-11e2-8080-808080808080 | e23f450f-53a6-11e2-7f7f-7f7f7f7f7f7f | 2013-01-01 00:05:00.000Z | 1356998700000 | 2013-01-01 00:00:00.000Z")
	})

	t.Run("BlobFunctions", func(t *testing.T) {
		wantRows(t, q(`SELECT intAsBlob(v), blobAsInt(intAsBlob(v)), textAsBlob("Name"), blobAsText(0x6869),
			bigintAsBlob(7), blobAsBigint(0x0000000000000102) FROM sel WHERE k = 1 AND c = 1`),
			"system.intasblob(v) blob, system.blobasint(system.intasblob(v)) int, system.textasblob(Name) blob, "+
				"system.blobastext(0x6869) varchar, system.bigintasblob(7) blob, system.blobasbigint(0x0000000000000102) bigint",
			"0x0000000a | 10 | 0x61 | hi | 0x0000000000000007 | 258")
	})

	t.Run("FunctionOfAMarker", func(t *testing.T) {
		// A marker takes its type from the function's argument.
		wantRows(t, q("SELECT blobAsInt(?) FROM sel WHERE k = 1 AND c = 1", []byte{0, 0, 1, 0}), "system.blobasint(?) int", "256")
	})

	t.Run("AggregateInsideAFunction", func(t *testing.T) {
		wantRows(t, q("SELECT intAsBlob(max(v)), blobAsInt(intAsBlob(min(v))) FROM sel WHERE k = 1"),
			"system.intasblob(system.max(v)) blob, system.blobasint(system.intasblob(system.min(v))) int", "0x00000014 | 10")
		err := q("SELECT max(min(v)) FROM sel").Exec()
		requireCQLError(t, err, 0x2200, "aggregate functions cannot be used as arguments of aggregate functions")
	})

	t.Run("JSONFunctions", func(t *testing.T) {
		wantRows(t, q(`SELECT toJson(v), toJson("Name"), toJson(s), toJson(c) FROM sel WHERE k = 1 AND c = 1`),
			"system.tojson(v) varchar, system.tojson(Name) varchar, system.tojson(s) varchar, system.tojson(c) varchar",
			`10 | "a" | 100 | 1`)
		exec(t, sess, `INSERT INTO sel (k, c, v, "Name") VALUES (6, fromJson('1'), fromJson('66'), fromJson('"x"'))`)
		wantRows(t, q(`SELECT c, v, "Name" FROM sel WHERE k = 6`), "", "1 | 66 | x")
		err := q("SELECT fromJson('1') FROM sel").Exec()
		requireCQLError(t, err, 0x2200, "fromJson() cannot be used in the selection clause of a SELECT statement")
	})

	t.Run("StaticOnlySelection", func(t *testing.T) {
		// Selecting only static columns still gives one row per row.
		wantRows(t, q("SELECT s FROM sel WHERE k = 1"), "s int", "100", "100")
		wantRows(t, q("SELECT k, s FROM sel WHERE k IN (1, 2, 3)"), "", "1 | 100", "1 | 100", "2 | null", "3 | 300")
		err := q("SELECT s FROM sel WHERE k = 1 AND c = 1").Exec()
		requireCQLError(t, err, 0x2200, "Cannot restrict clustering columns when selecting only static columns")
		wantRows(t, q("SELECT k FROM sel WHERE k = 1 AND c = 1"), "k int", "1")
	})
}

// TestSelectFeaturesAggregateTypes checks the result types of aggregates
// and Cassandra's arithmetic: sums wrap around in their type, averages of
// integers are integers.
func TestSelectFeaturesAggregateTypes(t *testing.T) {
	sess := featuresSession(t)
	exec(t, sess,
		"CREATE TABLE nums (k int, c int, i int, si smallint, ti tinyint, bi bigint, f float, d double, dec decimal, vi varint, PRIMARY KEY (k, c))",
		"INSERT INTO nums (k, c, i, si, ti, bi, f, d, dec, vi) VALUES (1, 1, 2147483647, 32767, 127, 9223372036854775807, 1.5, 0.5, 1.50, 9223372036854775807)",
		"INSERT INTO nums (k, c, i, si, ti, bi, f, d, dec, vi) VALUES (1, 2, 1, 1, 1, 1, 2.5, 1.5, 0.25, 1)",
		"INSERT INTO nums (k, c, i, si, ti, bi, f, d, dec, vi) VALUES (1, 3, 2, 2, 2, 2, 5, 4, 1, 2)")
	q := sess.Query
	wantRows(t, q("SELECT SUM(i), SUM(si), SUM(ti), SUM(bi), SUM(vi) FROM nums WHERE k = 1"),
		"system.sum(i) int, system.sum(si) smallint, system.sum(ti) tinyint, system.sum(bi) bigint, system.sum(vi) varint",
		"-2147483646 | -32766 | -126 | -9223372036854775806 | 9223372036854775810")
	wantRows(t, q("SELECT AVG(i), AVG(si), AVG(ti), AVG(bi), AVG(vi) FROM nums WHERE k = 1"),
		"system.avg(i) int, system.avg(si) smallint, system.avg(ti) tinyint, system.avg(bi) bigint, system.avg(vi) varint",
		"715827883 | 10923 | 43 | 3074457345618258603 | 3074457345618258603")
	wantRows(t, q("SELECT SUM(f), AVG(f), SUM(d), AVG(d), SUM(dec), AVG(dec) FROM nums WHERE k = 1"),
		"system.sum(f) float, system.avg(f) float, system.sum(d) double, system.avg(d) double, system.sum(dec) decimal, system.avg(dec) decimal",
		"9 | 3 | 6 | 2 | 2.75 | 0.92")
	wantRows(t, q("SELECT MIN(i), MAX(i), MIN(dec), MAX(f) FROM nums WHERE k = 1"),
		"system.min(i) int, system.max(i) int, system.min(dec) decimal, system.max(f) float",
		"1 | 2147483647 | 0.25 | 5")
	wantRows(t, q("SELECT AVG(dec), SUM(dec), AVG(f) FROM nums WHERE k = 2"), "", "0 | 0 | 0")
}

// TestSelectFeaturesWhere checks the WHERE clause and what orders and
// limits the rows: IN on partition keys, clustering slices and tuples,
// token ranges, filtering, GROUP BY, ORDER BY and the limits.
func TestSelectFeaturesWhere(t *testing.T) {
	sess := featuresSession(t)
	exec(t, sess, "CREATE TABLE wh (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2))")
	for k := 1; k <= 4; k++ {
		for c1 := 1; c1 <= 3; c1++ {
			for c2 := 1; c2 <= 2; c2++ {
				if err := sess.Query("INSERT INTO wh (k, c1, c2, v) VALUES (?, ?, ?, ?)", k, c1, c2, k*100+c1*10+c2).Exec(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	q := sess.Query
	// v renders the v of the rows of partition k, with (c1, c2) in cs.
	v := func(k int, cs ...int) []string {
		var out []string
		for i := 0; i < len(cs); i += 2 {
			out = append(out, strconv.Itoa(k*100+cs[i]*10+cs[i+1]))
		}
		return out
	}
	all := []int{1, 1, 1, 2, 2, 1, 2, 2, 3, 1, 3, 2}

	t.Run("Equality", func(t *testing.T) {
		wantRows(t, q("SELECT v FROM wh WHERE k = 2 AND c1 = 3 AND c2 = 1"), "v int", "231")
		wantRows(t, q("SELECT v FROM wh WHERE k = ? AND c1 = ?", 2, 1), "v int", v(2, 1, 1, 1, 2)...)
		wantRows(t, q("SELECT v FROM wh WHERE k = 9"), "v int")
	})

	t.Run("PartitionIN", func(t *testing.T) {
		// Partitions come back in the order of their sorted keys, once each.
		want := append(append(v(1, 2, 1), v(3, 2, 1)...), v(4, 2, 1)...)
		wantRows(t, q("SELECT v FROM wh WHERE k IN (4, 1, 3, 1, 99) AND c1 = 2 AND c2 = 1"), "v int", want...)
		wantRows(t, q("SELECT v FROM wh WHERE k IN ? AND c1 = ? AND c2 IN ?", []int{3, 1, 4}, 2, []int{1}), "v int", want...)
		wantRows(t, q("SELECT v FROM wh WHERE k IN () AND c1 = 1"), "v int")
		// IN on a clustering column: clustering order, whatever the list's.
		wantRows(t, q("SELECT v FROM wh WHERE k = 1 AND c1 IN (3, 1) AND c2 IN (2, 1)"), "", v(1, 1, 1, 1, 2, 3, 1, 3, 2)...)
	})

	t.Run("ClusteringSlices", func(t *testing.T) {
		wantRows(t, q("SELECT v FROM wh WHERE k = 1 AND c1 > 1"), "", v(1, 2, 1, 2, 2, 3, 1, 3, 2)...)
		wantRows(t, q("SELECT v FROM wh WHERE k = 1 AND c1 >= 2 AND c1 < 3"), "", v(1, 2, 1, 2, 2)...)
		wantRows(t, q("SELECT v FROM wh WHERE k = 1 AND c1 = 2 AND c2 <= 1"), "", v(1, 2, 1)...)
		wantRows(t, q("SELECT v FROM wh WHERE k = 1 AND c1 > 3"), "")
		wantRows(t, q("SELECT v FROM wh WHERE k = 1 AND (c1, c2) > (1, 2)"), "", v(1, all[4:]...)...)
		wantRows(t, q("SELECT v FROM wh WHERE k = 1 AND (c1, c2) >= (1, 2) AND (c1, c2) < (3, 2)"), "", v(1, 1, 2, 2, 1, 2, 2, 3, 1)...)
		wantRows(t, q("SELECT v FROM wh WHERE k = 1 AND (c1, c2) IN ((3, 1), (1, 2), (9, 9))"), "", v(1, 1, 2, 3, 1)...)
		wantRows(t, q("SELECT v FROM wh WHERE k = 1 AND (c1, c2) = (2, 2)"), "", v(1, 2, 2)...)
	})

	t.Run("TokenRanges", func(t *testing.T) {
		order := byToken(1, 2, 3, 4)
		toks := make([]int64, len(order))
		for i, k := range order {
			toks[i] = intToken(k)
		}
		keys := func(ks ...int) []string {
			var out []string
			for _, k := range ks {
				out = append(out, strconv.Itoa(k))
			}
			return out
		}
		// Ranges are (start, end]: > excludes its bound, <= includes it.
		wantRows(t, q("SELECT DISTINCT k FROM wh WHERE token(k) > ?", toks[1]), "k int", keys(order[2:]...)...)
		wantRows(t, q("SELECT DISTINCT k FROM wh WHERE token(k) >= ?", toks[1]), "k int", keys(order[1:]...)...)
		wantRows(t, q("SELECT DISTINCT k FROM wh WHERE token(k) > ? AND token(k) <= ?", toks[0], toks[2]), "", keys(order[1:3]...)...)
		wantRows(t, q("SELECT DISTINCT k FROM wh WHERE token(k) >= ? AND token(k) < ?", toks[0], toks[2]), "", keys(order[0:2]...)...)
		wantRows(t, q("SELECT DISTINCT k FROM wh WHERE token(k) = ?", toks[3]), "", keys(order[3])...)
		wantRows(t, q("SELECT DISTINCT k FROM wh WHERE token(k) < ?", toks[1]), "", keys(order[0])...)
		// A start above the end reads nothing: no wrap-around.
		wantRows(t, q("SELECT DISTINCT k FROM wh WHERE token(k) > ? AND token(k) < ?", toks[3], toks[0]), "")
		wantRows(t, q("SELECT DISTINCT k FROM wh WHERE token(k) > ? AND token(k) <= ?", toks[1], toks[1]), "")
		wantRows(t, q("SELECT v FROM wh WHERE token(k) > ? AND token(k) <= ? AND c1 = 3 ALLOW FILTERING", toks[2], toks[3]), "",
			v(order[3], 3, 1, 3, 2)...)
		wantRows(t, q("SELECT token(k), k FROM wh WHERE k = 3 AND c1 = 1 AND c2 = 1"), "system.token(k) bigint, k int",
			fmt.Sprintf("%d | 3", intToken(3)))
		wantRows(t, q("SELECT v FROM wh WHERE k = 3 AND token(k) > ? AND c1 = 1", intToken(3)), "")
	})

	t.Run("Filtering", func(t *testing.T) {
		// Filtered rows come in token order, then clustering order.
		var want []string
		for _, k := range byToken(1, 2, 3, 4) {
			want = append(want, v(k, 2, 2, 3, 1, 3, 2)...)
		}
		wantRows(t, q("SELECT v FROM wh WHERE (c1, c2) > (2, 1) ALLOW FILTERING"), "v int", want...)
		var even []string
		for _, k := range byToken(1, 2, 3, 4) {
			even = append(even, v(k, 2, 2, 3, 2)...)
		}
		wantRows(t, q("SELECT v FROM wh WHERE c1 >= 2 AND c2 = 2 ALLOW FILTERING"), "v int", even...)
		wantRows(t, q("SELECT v FROM wh WHERE c2 = 2 AND v > 200 AND v < 300 ALLOW FILTERING"), "v int", v(2, 1, 2, 2, 2, 3, 2)...)
		wantRows(t, q("SELECT v FROM wh WHERE v = 312 ALLOW FILTERING"), "", "312")
		wantRows(t, q("SELECT v FROM wh WHERE k = 2 AND v > 221 ALLOW FILTERING"), "", v(2, 2, 2, 3, 1, 3, 2)...)
		wantRows(t, q("SELECT v FROM wh WHERE k IN (2, 1) AND v < 112 ALLOW FILTERING"), "", v(1, 1, 1)...)
		err := q("SELECT v FROM wh WHERE v = 312").Exec()
		requireCQLError(t, err, 0x2200, "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING")
	})

	t.Run("GroupBy", func(t *testing.T) {
		var want []string
		for _, k := range byToken(1, 2, 3, 4) {
			want = append(want, fmt.Sprintf("%d | 6 | %d | %d", k, k*100+11, k*100+32))
		}
		wantRows(t, q("SELECT k, COUNT(*), MIN(v), MAX(v) FROM wh GROUP BY k"),
			"k int, count bigint, system.min(v) int, system.max(v) int", want...)
		wantRows(t, q("SELECT c1, SUM(v), COUNT(v), c2 FROM wh WHERE k = 2 GROUP BY k, c1"),
			"c1 int, system.sum(v) int, system.count(v) bigint, c2 int", "1 | 423 | 2 | 1", "2 | 443 | 2 | 1", "3 | 463 | 2 | 1")
		wantRows(t, q("SELECT k, c1, c2, COUNT(*) FROM wh WHERE k = 3 AND c1 = 2 GROUP BY k, c1, c2"), "",
			"3 | 2 | 1 | 1", "3 | 2 | 2 | 1")
		wantRows(t, q("SELECT k, c1, MAX(v) FROM wh WHERE k IN (4, 1) GROUP BY k, c1 LIMIT 4"), "",
			"1 | 1 | 112", "1 | 2 | 122", "1 | 3 | 132", "4 | 1 | 412")
		wantRows(t, q("SELECT c1, MAX(v) FROM wh WHERE k = 1 AND c1 > 1 GROUP BY k, c1 ORDER BY c1 DESC"), "",
			"3 | 132", "2 | 122")
		wantRows(t, q("SELECT k, c1 FROM wh WHERE k = 1 GROUP BY k, c1"), "k int, c1 int", "1 | 1", "1 | 2", "1 | 3")
		wantRows(t, q("SELECT COUNT(*) FROM wh WHERE k = 9 GROUP BY k"), "count bigint")
		err := q("SELECT COUNT(*) FROM wh GROUP BY c1").Exec()
		requireCQLError(t, err, 0x2200, "Group by currently only support groups of columns following their declared order in the PRIMARY KEY")
	})

	t.Run("OrderBy", func(t *testing.T) {
		rev := slices.Clone(all)
		for i, j := 0, len(rev)-2; i < j; i, j = i+2, j-2 {
			rev[i], rev[i+1], rev[j], rev[j+1] = rev[j], rev[j+1], rev[i], rev[i+1]
		}
		wantRows(t, q("SELECT v FROM wh WHERE k = 3 ORDER BY c1 DESC"), "", v(3, rev...)...)
		wantRows(t, q("SELECT v FROM wh WHERE k = 3 ORDER BY c1 DESC, c2 DESC LIMIT 3"), "", v(3, rev[:6]...)...)
		wantRows(t, q("SELECT v FROM wh WHERE k = 3 AND c1 = 2 ORDER BY c2 DESC"), "", v(3, 2, 2, 2, 1)...)
		wantRows(t, q("SELECT v FROM wh WHERE k = 3 AND c1 >= 2 ORDER BY c1 ASC, c2 ASC"), "", v(3, all[4:]...)...)
		// IN with ORDER BY sorts the rows of all partitions, which cannot
		// be paged.
		wantRows(t, q("SELECT k, c1, c2 FROM wh WHERE k IN (2, 1) AND c1 >= 2 ORDER BY c1 DESC, c2 DESC").PageSize(0), "",
			"1 | 3 | 2", "2 | 3 | 2", "1 | 3 | 1", "2 | 3 | 1", "1 | 2 | 2", "2 | 2 | 2", "1 | 2 | 1", "2 | 2 | 1")
		err := q("SELECT v FROM wh WHERE k = 1 ORDER BY c1 DESC, c2 ASC").Exec()
		requireCQLError(t, err, 0x2200, "Unsupported order by relation")
		wantRows(t, q("SELECT v FROM wh WHERE k IN (2, 1) AND c1 = 1 ORDER BY c1 DESC, c2 DESC LIMIT 3").PageSize(0), "",
			"112", "212", "111")
		err = q("SELECT v FROM wh WHERE k IN (1, 2) ORDER BY c1 DESC").Exec()
		requireCQLError(t, err, 0x2200, "Cannot page queries with both ORDER BY and a IN restriction on the partition key; "+
			"you must either remove the ORDER BY or the IN and sort client side, or disable paging for this query")
		err = q("SELECT v FROM wh ORDER BY c1 DESC").Exec()
		requireCQLError(t, err, 0x2200, "ORDER BY is only supported when the partition key is restricted by an EQ or an IN.")
	})

	t.Run("Limits", func(t *testing.T) {
		order := byToken(1, 2, 3, 4)
		var first2, first1 []string
		for _, k := range order {
			first2 = append(first2, v(k, 1, 1, 1, 2)...)
			first1 = append(first1, v(k, 1, 1)...)
		}
		wantRows(t, q("SELECT v FROM wh PER PARTITION LIMIT 2"), "", first2...)
		wantRows(t, q("SELECT v FROM wh PER PARTITION LIMIT 2 LIMIT 5"), "", first2[:5]...)
		wantRows(t, q("SELECT v FROM wh PER PARTITION LIMIT ? LIMIT ?", 1, 3), "", first1[:3]...)
		wantRows(t, q("SELECT v FROM wh WHERE k IN (3, 2) PER PARTITION LIMIT 1"), "", v(2, 1, 1)[0], v(3, 1, 1)[0])
		wantRows(t, q("SELECT v FROM wh WHERE k = 3 PER PARTITION LIMIT 3 LIMIT 2"), "", v(3, 1, 1, 1, 2)...)
		wantRows(t, q("SELECT v FROM wh WHERE k IN (3, 2) LIMIT 7"), "", append(v(2, all...), v(3, 1, 1)...)...)
		wantRows(t, q("SELECT v FROM wh WHERE k = 3 AND c1 > 1 LIMIT 1"), "", v(3, 2, 1)...)
		wantRows(t, q("SELECT v FROM wh LIMIT 1"), "", first1[0])
		wantRows(t, q("SELECT COUNT(*) FROM wh LIMIT 1"), "", "24")
		err := q("SELECT v FROM wh LIMIT 0").Exec()
		requireCQLError(t, err, 0x2200, "LIMIT must be strictly positive")
		err = q("SELECT COUNT(*) FROM wh PER PARTITION LIMIT 1").Exec()
		requireCQLError(t, err, 0x2200, "PER PARTITION LIMIT is not allowed with aggregate queries.")
		// With GROUP BY, PER PARTITION LIMIT counts groups.
		var groups []string
		for _, k := range order {
			groups = append(groups, fmt.Sprintf("%d | 1 | 2", k), fmt.Sprintf("%d | 2 | 2", k))
		}
		wantRows(t, q("SELECT k, c1, COUNT(*) FROM wh GROUP BY k, c1 PER PARTITION LIMIT 2"), "", groups...)
		wantRows(t, q("SELECT k, c1, COUNT(*) FROM wh WHERE k IN (3, 2) GROUP BY k, c1 PER PARTITION LIMIT 1 LIMIT 1"), "",
			"2 | 1 | 2")
	})
}

// TestSelectFeaturesCollections checks CONTAINS and CONTAINS KEY, through
// filtering and through secondary indexes, and composite partition keys.
func TestSelectFeaturesCollections(t *testing.T) {
	sess := featuresSession(t)
	exec(t, sess,
		"CREATE TABLE coll (k int, c int, tags set<text>, props map<text, int>, l list<int>, PRIMARY KEY (k, c))",
		"INSERT INTO coll (k, c, tags, props, l) VALUES (1, 1, {'a', 'b'}, {'x': 1}, [1, 2])",
		"INSERT INTO coll (k, c, tags, props, l) VALUES (1, 2, {'c'}, {'y': 2, 'x': 3}, [3])",
		"INSERT INTO coll (k, c, tags, props) VALUES (2, 1, {'a'}, {'z': 1})",
		"INSERT INTO coll (k, c) VALUES (3, 1)")
	q := sess.Query
	kc := func(pairs ...int) []string {
		var out []string
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, fmt.Sprintf("%d | %d", pairs[i], pairs[i+1]))
		}
		return out
	}
	// Slices of sets and maps include both bounds; an empty one is null.
	wantRows(t, q("SELECT tags['a'..'b'], props['x'..], props[..'x'], tags['q'..'z'] FROM coll WHERE k = 1 AND c = 2"),
		"tags['a'..'b'] set(varchar), props['x'..] map(varchar, int), props[..'x'] map(varchar, int), tags['q'..'z'] set(varchar)",
		"null | map[x:3 y:2] | map[x:3] | null")
	wantRows(t, q("SELECT tags['a'..'b'], props[?..?] FROM coll WHERE k = 1 AND c = 1", "w", "y"), "",
		"[a b] | map[x:1]")
	// withA lists the rows whose tags contain 'a', in token order.
	var withA []string
	for _, k := range byToken(1, 2) {
		withA = append(withA, kc(k, 1)...)
	}
	wantRows(t, q("SELECT k, c FROM coll WHERE tags CONTAINS 'a' ALLOW FILTERING"), "k int, c int", withA...)
	wantRows(t, q("SELECT k, c FROM coll WHERE props CONTAINS KEY 'x' ALLOW FILTERING"), "", kc(1, 1, 1, 2)...)
	wantRows(t, q("SELECT k, c FROM coll WHERE props CONTAINS 1 ALLOW FILTERING"), "", byTokenRows(kc(1, 1, 2, 1))...)
	wantRows(t, q("SELECT k, c FROM coll WHERE l CONTAINS 3 ALLOW FILTERING"), "", kc(1, 2)...)
	wantRows(t, q("SELECT k, c FROM coll WHERE k = 1 AND tags CONTAINS 'c' AND props CONTAINS KEY 'y' ALLOW FILTERING"), "", kc(1, 2)...)
	err := q("SELECT k, c FROM coll WHERE tags CONTAINS 'a'").Exec()
	requireCQLError(t, err, 0x2200, "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING")

	// An index on a collection indexes its values unless told otherwise.
	exec(t, sess, "CREATE INDEX ON coll (tags)", "CREATE INDEX ON coll (KEYS(props))")
	wantRows(t, q("SELECT k, c FROM coll WHERE tags CONTAINS 'a'"), "", withA...)
	wantRows(t, q("SELECT k, c FROM coll WHERE props CONTAINS KEY 'y'"), "", kc(1, 2)...)
	wantRows(t, q("SELECT k, c FROM coll WHERE k = 1 AND tags CONTAINS 'a'"), "", kc(1, 1)...)
	wantRows(t, q("SELECT k, c FROM coll WHERE tags CONTAINS 'nope'"), "k int, c int")

	exec(t, sess,
		"CREATE TABLE comp (a int, b text, c int, v int, PRIMARY KEY ((a, b), c))",
		"INSERT INTO comp (a, b, c, v) VALUES (1, 'x', 1, 1)",
		"INSERT INTO comp (a, b, c, v) VALUES (1, 'y', 1, 2)",
		"INSERT INTO comp (a, b, c, v) VALUES (2, 'x', 1, 3)",
		"INSERT INTO comp (a, b, c, v) VALUES (10, 'B', 1, 4)")
	// The cartesian product of the IN lists, in key order.
	wantRows(t, q("SELECT a, b, v FROM comp WHERE a IN (10, 2, 1) AND b IN ('y', 'B', 'x')"), "a int, b varchar, v int",
		"1 | x | 1", "1 | y | 2", "2 | x | 3", "10 | B | 4")
	wantRows(t, q("SELECT v FROM comp WHERE a = 1 AND b IN ('y', 'x') AND c = 1"), "", "1", "2")
	wantRows(t, q("SELECT token(a, b), v FROM comp WHERE a = 1 AND b = 'x'"), "system.token(a, b) bigint, v int",
		fmt.Sprintf("%d | 1", sharding.KeyToken([][]byte{{0, 0, 0, 1}, []byte("x")})))
	err = q("SELECT v FROM comp WHERE a = 1").Exec()
	requireCQLError(t, err, 0x2200, "Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING")
	wantRows(t, q("SELECT v FROM comp WHERE a = 1 ALLOW FILTERING"), "", byTokenComp(map[string]int{"1|x": 1, "1|y": 2})...)
}

// byTokenRows sorts "k | c" rows of int partition keys in token order,
// keeping the order of rows within a partition.
func byTokenRows(rows []string) []string {
	out := slices.Clone(rows)
	key := func(r string) int {
		k, _ := strconv.Atoi(strings.SplitN(r, " | ", 2)[0])
		return k
	}
	sort.SliceStable(out, func(i, j int) bool { return intToken(key(out[i])) < intToken(key(out[j])) })
	return out
}

// byTokenComp renders the values of partitions of comp, keyed "a|b", in
// token order.
func byTokenComp(values map[string]int) []string {
	type part struct {
		token int64
		v     int
	}
	var parts []part
	for key, v := range values {
		a, b, _ := strings.Cut(key, "|")
		n, _ := strconv.Atoi(a)
		parts = append(parts, part{int64(sharding.KeyToken([][]byte{binary.BigEndian.AppendUint32(nil, uint32(n)), []byte(b)})), v})
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].token < parts[j].token })
	var out []string
	for _, p := range parts {
		out = append(out, strconv.Itoa(p.v))
	}
	return out
}

// pagedRows reads a query page by page, size rows a page, and returns its
// rows and how many rows each page held.
func pagedRows(t *testing.T, sess *gocql.Session, size int, stmt string, args ...any) (rows []string, pages []int) {
	t.Helper()
	var state []byte
	for {
		page, next := readPage(t, sess.Query(stmt, args...).PageSize(size).PageState(state))
		rows = append(rows, page.rows...)
		pages = append(pages, len(page.rows))
		if len(next) == 0 {
			return rows, pages
		}
		if len(pages) > 1000 {
			t.Fatalf("%s: more than 1000 pages", stmt)
		}
		state = next
	}
}

// TestSelectFeaturesPaging checks paging: pages hold the page size's rows
// (groups, partitions) but the last, every row comes once and in order,
// and LIMIT and PER PARTITION LIMIT hold across pages.
func TestSelectFeaturesPaging(t *testing.T) {
	sess := featuresSession(t)
	exec(t, sess, "CREATE TABLE pg (k int, c int, v int, s int static, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)")
	for k := 1; k <= 6; k++ {
		for c := 1; c <= k; c++ {
			if err := sess.Query("INSERT INTO pg (k, c, v) VALUES (?, ?, ?)", k, c, k*10+c).Exec(); err != nil {
				t.Fatal(err)
			}
		}
	}
	exec(t, sess, "UPDATE pg SET s = 7 WHERE k = 7", "UPDATE pg SET s = 1 WHERE k = 1")
	for _, tc := range []struct {
		stmt string
		args []any
	}{
		{"SELECT k, c, v FROM pg WHERE k = 5", nil},
		{"SELECT k, c, v FROM pg WHERE k = 6 AND c < 6", nil},
		{"SELECT k, c FROM pg WHERE k IN (6, 2, 4, 1, 7)", nil},
		{"SELECT k, c, v, s FROM pg", nil},
		{"SELECT * FROM pg WHERE token(k) > ?", []any{intToken(byToken(1, 2, 3, 4, 5, 6, 7)[1])}},
		{"SELECT k, c FROM pg WHERE v > 30 ALLOW FILTERING", nil},
		{"SELECT DISTINCT k, s FROM pg", nil},
		{"SELECT k, COUNT(*), MAX(v) FROM pg GROUP BY k", nil},
		{"SELECT k, c, COUNT(*) FROM pg WHERE k IN (5, 6) GROUP BY k, c", nil},
		{"SELECT k, c FROM pg PER PARTITION LIMIT 2", nil},
		{"SELECT k, c FROM pg WHERE k IN (3, 4, 5) PER PARTITION LIMIT 2", nil},
		{"SELECT k, c FROM pg LIMIT 9", nil},
		{"SELECT k, c FROM pg WHERE k = 6 LIMIT 5", nil},
		{"SELECT k, c FROM pg WHERE k = 6 ORDER BY c ASC", nil},
		{"SELECT k, c FROM pg PER PARTITION LIMIT 3 LIMIT 7", nil},
	} {
		all := readText(t, sess.Query(tc.stmt, tc.args...).PageSize(0)).rows
		if len(all) < 4 {
			t.Fatalf("%s: only %d rows", tc.stmt, len(all))
		}
		for _, size := range []int{1, 2, 3, len(all) - 1, len(all), len(all) + 1} {
			rows, pages := pagedRows(t, sess, size, tc.stmt, tc.args...)
			if !slices.Equal(rows, all) {
				t.Errorf("%s, pages of %d: rows\n got %q\nwant %q", tc.stmt, size, rows, all)
			}
			// Every page but the last is full; the last is not empty.
			for i, n := range pages {
				if n > size || i < len(pages)-1 && n != size || n == 0 {
					t.Errorf("%s, pages of %d: page sizes %v", tc.stmt, size, pages)
					break
				}
			}
			// The driver pages by itself too.
			if got := readText(t, sess.Query(tc.stmt, tc.args...).PageSize(size)).rows; !slices.Equal(got, all) {
				t.Errorf("%s, driver paging by %d: rows\n got %q\nwant %q", tc.stmt, size, got, all)
			}
		}
	}

	// A scan of many partitions reads its token ranges a few at a time.
	exec(t, sess, "CREATE TABLE pgbig (k int, c int, PRIMARY KEY (k, c))")
	b := sess.NewBatch(gocql.UnloggedBatch)
	var keys []int
	for k := range 150 {
		keys = append(keys, k)
		for c := range 2 {
			b.Query("INSERT INTO pgbig (k, c) VALUES (?, ?)", k, c)
		}
	}
	if err := sess.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, k := range byToken(keys...) {
		want = append(want, fmt.Sprintf("%d | 0", k), fmt.Sprintf("%d | 1", k))
	}
	for _, size := range []int{7, 100, 299, 5000} {
		if rows, _ := pagedRows(t, sess, size, "SELECT k, c FROM pgbig"); !slices.Equal(rows, want) {
			t.Errorf("pgbig in pages of %d: %d rows, want %d in token order", size, len(rows), len(want))
		}
	}

	// An aggregate over all rows is one row, whatever the page size.
	for stmt, want := range map[string]string{"SELECT COUNT(*) FROM pg": "22", "SELECT SUM(v), MIN(c) FROM pg": "966 | 1"} {
		rows, pages := pagedRows(t, sess, 1, stmt)
		if !slices.Equal(rows, []string{want}) || len(pages) != 1 {
			t.Errorf("%s in pages of 1: %q %v", stmt, rows, pages)
		}
	}
	err := sess.Query("SELECT k FROM pg").PageSize(2).PageState([]byte("garbage")).Exec()
	requireCQLError(t, err, 0x000A, "Invalid value for the paging state")
}
