package gateway_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gocql/gocql"
	"gopkg.in/inf.v0"
)

// TestMathFunctions runs Cassandra 5.0's abs, exp, log, log10 and round
// through gocql on every numeric type, with Java's narrowing for the
// integers and 32 significant digits for decimals, and the failure of a
// decimal's log of zero.
func TestMathFunctions(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS fn5 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS fn5.nums (k int PRIMARY KEY, ti tinyint, si smallint, i int, bi bigint, f float, d double, "+
			"vi varint, de decimal)",
		"INSERT INTO fn5.nums (k, ti, si, i, bi, f, d, vi, de) VALUES (1, -5, 5, -3, 100, -1.5, 2.5, 5, 5)",
		"INSERT INTO fn5.nums (k, de) VALUES (2, 0)")
	var (
		absTi, expTi      int8
		expSi             int16
		absI, logI        int32
		expBi             int64
		roundF            float32
		roundD, log10D    float64
		expVi             int64
		expDe, logDe      *inf.Dec
		colName, colName2 string
	)
	iter := sess.Query("SELECT abs(ti), exp(ti), exp(si), abs(i), log(i), exp(bi), round(f), round(d), log10(d), " +
		"exp(vi), exp(de), log(de) FROM fn5.nums WHERE k = 1").Iter()
	cols := iter.Columns()
	colName, colName2 = cols[0].Name, cols[11].Name
	if !iter.Scan(&absTi, &expTi, &expSi, &absI, &logI, &expBi, &roundF, &roundD, &log10D, &expVi, &expDe, &logDe) {
		t.Fatal(iter.Close())
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
	if colName != "system.abs(ti)" || colName2 != "system.log(de)" {
		t.Errorf("column names %q, %q", colName, colName2)
	}
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"abs(tinyint -5)", absTi, int8(5)},
		{"exp(tinyint -5)", expTi, int8(0)},
		{"exp(smallint 5)", expSi, int16(148)},
		{"abs(int -3)", absI, int32(3)},
		{"log(int -3)", logI, int32(0)}, // NaN casts to 0
		{"exp(bigint 100)", expBi, int64(math.MaxInt64)},
		{"round(float -1.5)", roundF, float32(-1)},
		{"round(double 2.5)", roundD, 3.0},
		{"log10(double 2.5)", log10D, math.Log10(2.5)},
		{"exp(varint 5)", expVi, int64(148)},
		{"exp(decimal 5)", expDe.String(), "148.41315910257660342111558004055"},
		{"log(decimal 5)", logDe.String(), "1.6094379124341003746007593332262"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	err := sess.Query("SELECT log(de) FROM fn5.nums WHERE k = 2").Scan(&logDe)
	var ff *gocql.RequestErrFunctionFailure
	if !errors.As(err, &ff) || !strings.Contains(err.Error(), "Natural log of number zero or less") {
		t.Errorf("log of a decimal zero: %v", err)
	}
	var n int32
	if err := sess.Query("SELECT abs(?) FROM fn5.nums WHERE k = 1", "x").Scan(&n); err == nil {
		t.Errorf("abs of a text marker: no error")
	}
}

// TestCollectionFunctions runs Cassandra 5.0's map_keys, map_values,
// collection_count, collection_min, collection_max, collection_sum and
// collection_avg on frozen and non-frozen collections, and format_bytes
// and format_time, with Cassandra's refusals.
func TestCollectionFunctions(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS fn5 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS fn5.colls (k int PRIMARY KEY, m map<text, int>, s set<int>, l frozen<list<double>>, "+
			"e set<int>, t text, b bigint)",
		"INSERT INTO fn5.colls (k, m, s, l, t, b) VALUES (1, {'b': 2, 'a': 1, 'c': 30}, {5, -1, 7}, [1.5, 2.5, 0.5], "+
			"'3600000', 1073741825)")
	var (
		keys                    []string
		values                  []int
		count, smin, smax, ssum int
		lavg                    float64
		empty                   *int
	)
	err := sess.Query("SELECT map_keys(m), map_values(m), collection_count(m), collection_min(s), collection_max(s), "+
		"collection_sum(s), collection_avg(l), collection_count(e) FROM fn5.colls WHERE k = 1").
		Scan(&keys, &values, &count, &smin, &smax, &ssum, &lavg, &empty)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, ",") != "a,b,c" || len(values) != 3 || values[0] != 1 || values[2] != 30 || count != 3 ||
		smin != -1 || smax != 7 || ssum != 11 || lavg != 1.5 || empty != nil {
		t.Errorf("got keys %v, values %v, count %d, min %d, max %d, sum %d, avg %v, count of null %v",
			keys, values, count, smin, smax, ssum, lavg, empty)
	}
	var b1, b2, b3, t1, t2, t3 string
	err = sess.Query("SELECT format_bytes(b), format_bytes(b, 'MiB'), format_bytes(k, 'GiB', 'KiB'), format_time(t), "+
		"format_time(b, 's'), format_time(k, 'd', 'h') FROM fn5.colls WHERE k = 1").Scan(&b1, &b2, &b3, &t1, &t2, &t3)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{b1, b2, b3, t1, t2, t3}; strings.Join(got, "|") != "1 GiB|1024 MiB|1048576 KiB|1 h|1073741 s|24 h" {
		t.Errorf("format functions: %q", got)
	}
	for q, want := range map[string]string{
		"SELECT map_keys(s) FROM fn5.colls":               "Function system.map_keys requires a map argument, but found argument s of type set<int>",
		"SELECT collection_sum(m) FROM fn5.colls":         "Function system.collection_sum requires a numeric set/list argument, but found argument m of type map<text, int>",
		"SELECT collection_count(t) FROM fn5.colls":       "Function system.collection_count requires a collection argument, but found argument t of type text",
		"SELECT map_keys(?) FROM fn5.colls":               "Cannot infer type of argument ? in call to function system.map_keys(map): use type casts to disambiguate",
		"SELECT map_keys(m, m) FROM fn5.colls":            "Invalid number of arguments for function system.map_keys(map)",
		"SELECT format_bytes(b, 'XB') FROM fn5.colls":     "Unsupported data storage unit: XB. Supported units are: B, KiB, MiB, GiB",
		"SELECT format_time(b, 'ms', 'y') FROM fn5.colls": "Unsupported time unit: y. Supported units are: ns, us, ms, s, m, h, d",
		"SELECT format_bytes(l) FROM fn5.colls":           "Function system.format_bytes requires an argument of type [int|tinyint|smallint|bigint|varint|ascii|text], but found argument l of type frozen<list<double>>",
	} {
		if err := sess.Query(q).Exec(); err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", q, err, want)
		}
	}
}

// TestSimilarityFunctions runs Cassandra 5.0's similarity_cosine,
// similarity_euclidean and similarity_dot_product on float vectors, a
// column against a literal and a column against itself, and its refusals.
func TestSimilarityFunctions(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS fn5 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE IF NOT EXISTS fn5.vecs (k int PRIMARY KEY, v vector<float, 3>, w vector<float, 2>, n int)",
		"INSERT INTO fn5.vecs (k, v, w, n) VALUES (1, [0.6, 0.8, 0], [1, 0], 3)")
	var cos, euc, dotSelf, dotUnit float32
	err := sess.Query("SELECT similarity_cosine(v, [1, 0, 0]), similarity_euclidean(v, [0, 0, 0]), "+
		"similarity_dot_product(v, v), similarity_dot_product(v, [0, 1, 0]) FROM fn5.vecs WHERE k = 1").
		Scan(&cos, &euc, &dotSelf, &dotUnit)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float32) bool { return math.Abs(float64(a-b)) < 1e-6 }
	// cosine 0.6 -> (1 + 0.6) / 2; squared distance 1 -> 1 / 2; dot 1 -> 1; dot 0.8 -> 0.9.
	if !near(cos, 0.8) || !near(euc, 0.5) || !near(dotSelf, 1) || !near(dotUnit, 0.9) {
		t.Errorf("similarities: cosine %v, euclidean %v, dot with itself %v, dot %v", cos, euc, dotSelf, dotUnit)
	}
	for q, want := range map[string]string{
		"SELECT similarity_cosine(n, n) FROM fn5.vecs":           "Only float vectors are supported by system.similarity_cosine",
		"SELECT similarity_cosine(v, w) FROM fn5.vecs":           "All arguments must have the same vector dimensions",
		"SELECT similarity_cosine([1, 2], [1, 2]) FROM fn5.vecs": "Cannot infer type of argument [1, 2] in call to function system.similarity_cosine(any, same): use type casts to disambiguate",
		"SELECT similarity_euclidean(v) FROM fn5.vecs":           "Invalid number of arguments for function system.similarity_euclidean(any, same)",
	} {
		if err := sess.Query(q).Exec(); err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", q, err, want)
		}
	}
}
