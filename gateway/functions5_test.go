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
