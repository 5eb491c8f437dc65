package gateway_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// The drivers' test suites define these: the average over a
// tuple<int, bigint> state, and string functions.
var udfDDL = []string{
	"CREATE FUNCTION udf.avgstate(state tuple<int, bigint>, val int) CALLED ON NULL INPUT RETURNS tuple<int, bigint> LANGUAGE java AS " +
		"'if (val != null) { state.setInt(0, state.getInt(0) + 1); state.setLong(1, state.getLong(1) + val.intValue()); } return state;'",
	"CREATE FUNCTION udf.avgfinal(state tuple<int, bigint>) CALLED ON NULL INPUT RETURNS double LANGUAGE java AS " +
		"'double r = 0; if (state.getInt(0) == 0) return null; r = state.getLong(1); r /= state.getInt(0); return Double.valueOf(r);'",
	"CREATE AGGREGATE udf.average(int) SFUNC avgstate STYPE tuple<int, bigint> FINALFUNC avgfinal INITCOND (0, 0)",
	"CREATE FUNCTION udf.shout(s text) RETURNS NULL ON NULL INPUT RETURNS text LANGUAGE java AS $$return s.toUpperCase() + \"!\";$$",
	"CREATE FUNCTION udf.twice(n int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return n * 2;'",
	"CREATE FUNCTION udf.twice(s text) RETURNS NULL ON NULL INPUT RETURNS text LANGUAGE java AS 'return s + s;'",
	"CREATE FUNCTION udf.div(a int, b int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return a / b;'",
	"CREATE FUNCTION udf.spin(n int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'int i = 0; while (true) { i++; }'",
	"CREATE FUNCTION udf.total(l list<int>) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS " +
		"'int sum = 0; for (Integer i : l) sum += i; return sum;'",
}

// TestUserFunctions creates the functions and aggregates the drivers'
// suites use and runs them through gocql: in selections, in values, as
// aggregates over rows and groups, with nulls, overloads and failures,
// and checks their schema tables, DESCRIBE and the texts of refusals.
func TestUserFunctions(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "DROP KEYSPACE IF EXISTS udf",
		"CREATE KEYSPACE udf WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE udf.t (k int, c int, v int, s text, l list<int>, PRIMARY KEY (k, c))")
	exec(t, sess, udfDDL...)
	for i := range 10 {
		v := any(i * 10)
		if i == 9 {
			v = nil
		}
		if err := sess.Query("INSERT INTO udf.t (k, c, v, s, l) VALUES (?, ?, ?, ?, ?)", i%2, i, v, "row", []int{i, 1}).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	var avg *float64
	if err := sess.Query("SELECT udf.average(v) FROM udf.t").Scan(&avg); err != nil || avg == nil || *avg != 40 {
		t.Errorf("average(v) = %v, %v; want 40 (nulls skipped)", avg, err)
	}
	if got := viewRows(t, sessionKS(t, "udf"), "SELECT k, average(v) FROM t GROUP BY k"); !slices.Equal(got, []string{"0:40", "1:40"}) {
		t.Errorf("average(v) by k: %q", got)
	}
	if err := sess.Query("SELECT udf.average(v) FROM udf.t WHERE k = 5").Scan(&avg); err != nil || avg != nil {
		t.Errorf("average of no rows = %v, %v; want null", avg, err)
	}
	var shout, twiceText string
	var twice, total int
	if err := sess.Query("SELECT udf.shout(s), udf.twice(v), udf.twice(s), udf.total(l) FROM udf.t WHERE k = 1 AND c = 3").
		Scan(&shout, &twice, &twiceText, &total); err != nil || shout != "ROW!" || twice != 60 || twiceText != "rowrow" || total != 4 {
		t.Errorf("shout, twice, twice, total = %q %d %q %d, %v", shout, twice, twiceText, total, err)
	}
	var nullTwice *int
	if err := sess.Query("SELECT udf.twice(v) FROM udf.t WHERE k = 1 AND c = 9").Scan(&nullTwice); err != nil || nullTwice != nil {
		t.Errorf("twice(null) = %v, %v; want null (RETURNS NULL ON NULL INPUT)", nullTwice, err)
	}
	// In a value: evaluated before the write.
	exec(t, sess, "INSERT INTO udf.t (k, c, v) VALUES (7, 1, udf.twice(21))")
	var v int
	if err := sess.Query("SELECT v FROM udf.t WHERE k = 7 AND c = 1").Scan(&v); err != nil || v != 42 {
		t.Errorf("twice(21) written: %d, %v", v, err)
	}

	// Failures: a Java exception, a runaway body.
	var ff *gocql.RequestErrFunctionFailure
	err := sess.Query("SELECT udf.div(v, c) FROM udf.t WHERE k = 0 AND c = 0").Scan(&v)
	if !errors.As(err, &ff) || ff.Message() != "execution of 'udf.div[int, int]' failed: java.lang.ArithmeticException: / by zero" ||
		ff.Keyspace != "udf" || ff.Function != "div" || !slices.Equal(ff.ArgTypes, []string{"int", "int"}) {
		t.Errorf("div by zero: %v", err)
	}
	began := time.Now()
	err = sess.Query("SELECT udf.spin(v) FROM udf.t WHERE k = 0 AND c = 0").Scan(&v)
	if !errors.As(err, &ff) || ff.Message() != "execution of 'udf.spin[int]' failed: java.util.concurrent.TimeoutException: "+
		"User defined function udf.spin : (int) -> int ran longer than 1500ms" {
		t.Errorf("runaway body: %v", err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("runaway body stopped after %v", took)
	}

	// Schema tables and DESCRIBE.
	if got := viewRows(t, sess, "SELECT function_name, argument_types, argument_names, called_on_null_input, language, return_type "+
		"FROM system_schema.functions WHERE keyspace_name = 'udf' AND function_name = 'twice'"); !slices.Equal(got,
		[]string{"twice:[int]:[n]:false:java:int", "twice:[text]:[s]:false:java:text"}) {
		t.Errorf("system_schema.functions: %q", got)
	}
	if got := viewRows(t, sess, "SELECT aggregate_name, argument_types, state_func, state_type, final_func, initcond, return_type "+
		"FROM system_schema.aggregates WHERE keyspace_name = 'udf'"); !slices.Equal(got,
		[]string{"average:[int]:avgstate:frozen<tuple<int, bigint>>:avgfinal:(0, 0):double"}) {
		t.Errorf("system_schema.aggregates: %q", got)
	}
	desc := describeRows(t, sess, "DESCRIBE FUNCTION udf.shout", "keyspace_name", "type", "name", "create_statement")
	if want := "udf | function | shout(text) | CREATE FUNCTION udf.shout(s text)\n    RETURNS NULL ON NULL INPUT\n    RETURNS text\n" +
		"    LANGUAGE java\n    AS $$return s.toUpperCase() + \"!\";$$;"; len(desc) != 1 || desc[0] != want {
		t.Errorf("DESCRIBE FUNCTION:\n%s\nwant\n%s", strings.Join(desc, "\n"), want)
	}
	desc = describeRows(t, sess, "DESCRIBE AGGREGATE udf.average", "keyspace_name", "type", "name", "create_statement")
	if want := "udf | aggregate | average(int) | CREATE AGGREGATE udf.average(int)\n    SFUNC avgstate\n    STYPE frozen<tuple<int, bigint>>\n" +
		"    FINALFUNC avgfinal\n    INITCOND (0, 0);"; len(desc) != 1 || desc[0] != want {
		t.Errorf("DESCRIBE AGGREGATE:\n%s\nwant\n%s", strings.Join(desc, "\n"), want)
	}

	for stmt, want := range map[string]string{
		"CREATE FUNCTION udf.twice(n int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return n;'":                      "Function 'twice' already exists",
		"CREATE OR REPLACE FUNCTION udf.twice(n int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return n;'":                 "Function 'twice' must have CALLED ON NULL INPUT directive",
		"CREATE OR REPLACE FUNCTION udf.twice(n int) RETURNS NULL ON NULL INPUT RETURNS text LANGUAGE java AS 'return \"\";'":       "Cannot replace function 'twice', the new return type text is not compatible with the return type int of existing function",
		"CREATE OR REPLACE FUNCTION IF NOT EXISTS udf.f(n int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return n;'": "Cannot use both 'OR REPLACE' and 'IF NOT EXISTS' directives",
		"CREATE FUNCTION udf.f(n int, n int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return n;'":                   "Duplicate argument names for given function f with argument names [n, n]",
		"CREATE FUNCTION udf.f(n frozen<list<int>>) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return 1;'":            "Argument 'frozen<list<int>>' cannot be frozen; remove frozen<> modifier from 'frozen<list<int>>'",
		"CREATE FUNCTION udf.f(n int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE javascript AS 'n'":                            "Scripted user-defined functions are disabled in cassandra.yaml - set scripted_user_defined_functions_enabled=true to enable if you are aware of the security risks",
		"DROP FUNCTION udf.twice":                            "'DROP FUNCTION twice' matches multiple function definitions; specify the argument types by issuing a statement like 'DROP FUNCTION twice (type, type, ...)'. You can use cqlsh 'DESCRIBE FUNCTION twice' command to find all overloads",
		"DROP FUNCTION udf.nope(int)":                        "Function 'udf.nope(int)' doesn't exist",
		"DROP FUNCTION udf.avgstate":                         "Function 'udf.avgstate' is still referenced by aggregates udf.average",
		"CREATE AGGREGATE udf.a2(int) SFUNC nope STYPE int":  "State function udf.nope(int, int) doesn't exist",
		"CREATE AGGREGATE udf.a2(int) SFUNC twice STYPE int": "State function udf.twice(int, int) doesn't exist",
		"CREATE AGGREGATE udf.average(int) SFUNC avgstate STYPE tuple<int, bigint> FINALFUNC avgfinal INITCOND (0, 0)": "Aggregate 'average' already exists",
		"SELECT udf.nope(v) FROM udf.t": "Unknown function 'udf.nope'",
	} {
		if err := sess.Query(stmt).Exec(); err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", stmt, err, want)
		}
	}
	err = sess.Query("CREATE FUNCTION udf.f(n int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS " +
		"'synchronized (this) { return n; }'").Exec()
	if err == nil || !strings.HasPrefix(err.Error(), "Java source compilation failed:\nLine 1: ") {
		t.Errorf("a body outside the interpreter's subset: %v", err)
	}
	exec(t, sess, "CREATE OR REPLACE FUNCTION udf.twice(n int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return n * 3;'",
		"DROP FUNCTION udf.twice(text)", "DROP FUNCTION IF EXISTS udf.twice(text)")
	if err := sess.Query("SELECT udf.twice(v) FROM udf.t WHERE k = 1 AND c = 3").Scan(&twice); err != nil || twice != 90 {
		t.Errorf("replaced twice(30) = %d, %v", twice, err)
	}
	exec(t, sess, "DROP AGGREGATE udf.average", "DROP FUNCTION udf.avgstate", "DROP KEYSPACE udf")
}

// sessionKS opens a session whose keyspace is ks.
func sessionKS(t *testing.T, ks string) *gocql.Session { return session(t, ks) }

// TestUDFPermissions: with authentication on, calling a user function
// needs EXECUTE on it, granted on the function or on every function of
// its keyspace, and creating one needs CREATE on the keyspace's functions;
// its creator holds every permission on it.
func TestUDFPermissions(t *testing.T) {
	s := startAuthGateway(t, nil)
	su := superSession(t, s)
	exec(t, su, "DROP KEYSPACE IF EXISTS udfauth", "DROP ROLE IF EXISTS caller",
		"CREATE KEYSPACE udfauth WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE udfauth.t (k int PRIMARY KEY, v int)", "INSERT INTO udfauth.t (k, v) VALUES (1, 5)",
		"CREATE FUNCTION udfauth.inc(n int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return n + 1;'",
		"CREATE ROLE caller WITH PASSWORD = 'pw' AND LOGIN = true",
		"GRANT SELECT ON KEYSPACE udfauth TO caller")
	t.Cleanup(func() { exec(t, su, "DROP KEYSPACE IF EXISTS udfauth", "DROP ROLE IF EXISTS caller") })
	caller := loginSession(t, s, "caller", "pw")
	var v int
	err := caller.Query("SELECT udfauth.inc(v) FROM udfauth.t WHERE k = 1").Scan(&v)
	if err == nil || err.Error() != "User caller has no EXECUTE permission on <function udfauth.inc(int)> or any of its parents" {
		t.Errorf("call without EXECUTE: %v", err)
	}
	exec(t, su, "GRANT EXECUTE ON FUNCTION udfauth.inc(int) TO caller")
	if err := caller.Query("SELECT udfauth.inc(v) FROM udfauth.t WHERE k = 1").Scan(&v); err != nil || v != 6 {
		t.Errorf("call with EXECUTE on the function: %d, %v", v, err)
	}
	exec(t, su, "REVOKE EXECUTE ON FUNCTION udfauth.inc(int) FROM caller", "GRANT EXECUTE ON ALL FUNCTIONS IN KEYSPACE udfauth TO caller")
	if err := caller.Query("SELECT udfauth.inc(v) FROM udfauth.t WHERE k = 1").Scan(&v); err != nil || v != 6 {
		t.Errorf("call with EXECUTE on the keyspace's functions: %d, %v", v, err)
	}
	err = caller.Query("CREATE FUNCTION udfauth.dec(n int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS 'return n - 1;'").Exec()
	if err == nil || err.Error() != "User caller has no CREATE permission on <all functions in udfauth> or any of its parents" {
		t.Errorf("CREATE FUNCTION without CREATE: %v", err)
	}
	if got := rowStrings(t, su, "LIST ALL PERMISSIONS OF caller"); !strings.Contains(fmtRows(got), "<all functions in udfauth>") {
		t.Errorf("permissions of caller: %q", got)
	}
}

// fmtRows joins rows for a containment check.
func fmtRows(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, " | ") + "\n")
	}
	return b.String()
}
