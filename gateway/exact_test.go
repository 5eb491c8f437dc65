package gateway_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// TestExactValues: dates and decimals Postgres cannot hold keep their CQL
// bytes in the exact companion, through every way a cell is written,
// compared and removed: filters and indexes compare values as Cassandra
// does (1E+3 equals 1000, 2E+1000000 is above 1E+1000000), conditions see
// them, an ordinary value replaces one, a deletion removes one, and psql
// shows the nearest value its type has.
func TestExactValues(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE exact WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE exact.t (k date, c int, d decimal, day date, s decimal STATIC, PRIMARY KEY (k, c))",
		"CREATE INDEX ON exact.t (d)")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS exact") })
	const k = "'-5877641-06-23'"
	exec(t, sess,
		"INSERT INTO exact.t (k, c, d, day, s) VALUES ("+k+", 1, 1E+1000000, '+5881580-07-11', -1E-1000000)",
		"INSERT INTO exact.t (k, c, d, day) VALUES ("+k+", 2, 2E+1000000, '-5877641-06-23')",
		"INSERT INTO exact.t (k, c, d, day) VALUES ("+k+", 3, 1E+3, '2024-01-01')",
		"INSERT INTO exact.t (k, c, d, day) VALUES ("+k+", 4, 1000, '+5874898-01-01')",
		"INSERT INTO exact.t (k, c, d, day) VALUES ("+k+", 5, 1E-20000, '1970-01-01')",
		"INSERT INTO exact.t (k, c, d, day) VALUES ("+k+", 6, 0, '-4713-11-23')")
	// toJson prints decimals as BigDecimal.toString does (1E+3).
	wantRows(t, sess.Query("SELECT toJson(k), c, toJson(d), toJson(day), toJson(s) FROM exact.t WHERE k = "+k),
		"system.tojson(k) varchar, c int, system.tojson(d) varchar, system.tojson(day) varchar, system.tojson(s) varchar",
		`"-5877641-06-23" | 1 | 1E+1000000 | "+5881580-07-11" | -1E-1000000`,
		`"-5877641-06-23" | 2 | 2E+1000000 | "-5877641-06-23" | -1E-1000000`,
		`"-5877641-06-23" | 3 | 1E+3 | "2024-01-01" | -1E-1000000`,
		`"-5877641-06-23" | 4 | 1000 | "+5874898-01-01" | -1E-1000000`,
		`"-5877641-06-23" | 5 | 1E-20000 | "1970-01-01" | -1E-1000000`,
		`"-5877641-06-23" | 6 | 0 | "-4713-11-23" | -1E-1000000`)
	filter := func(where string, want ...int) {
		t.Helper()
		got := ints(t, sess, "SELECT c FROM exact.t WHERE k = "+k+" AND "+where+" ALLOW FILTERING")
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: rows %v, want %v", where, got, want)
		}
	}
	filter("d = 1E+1000000", 1)
	filter("d = 1000", 3, 4)
	filter("d = 1E+3", 3, 4)
	filter("d > 1E+1000000", 2)
	filter("d > 1000", 1, 2)
	filter("d < 1", 5, 6)
	filter("d > 0 AND d < 1E-19999", 5)
	filter("d IN (2E+1000000, 1E-20000)", 2, 5)
	filter("day > '+5874897-12-31'", 1, 4)
	filter("day < '-4713-11-24'", 2, 6)
	filter("day = '-5877641-06-23'", 2)
	if got := ints(t, sess, "SELECT c FROM exact.t WHERE d = 2E+1000000"); !slices.Equal(got, []int{2}) {
		t.Errorf("index lookup of 2E+1000000: rows %v, want [2]", got)
	}
	// Conditions compare the exact values.
	applied := func(stmt string, want bool) {
		t.Helper()
		got, err := sess.Query(stmt).MapScanCAS(map[string]any{})
		if err != nil || got != want {
			t.Errorf("%s: applied %v (%v), want %v", stmt, got, err, want)
		}
	}
	applied("UPDATE exact.t SET d = 3 WHERE k = "+k+" AND c = 1 IF d = 2E+1000000", false)
	applied("UPDATE exact.t SET d = 3E+1000000 WHERE k = "+k+" AND c = 1 IF d = 1E+1000000", true)
	// An ordinary value replaces an exact one; a deletion removes one.
	exec(t, sess,
		"UPDATE exact.t SET day = '2000-01-01' WHERE k = "+k+" AND c = 1",
		"DELETE d FROM exact.t WHERE k = "+k+" AND c = 2")
	wantRows(t, sess.Query("SELECT c, toJson(d), toJson(day) FROM exact.t WHERE k = "+k+" AND c IN (1, 2)"),
		"c int, system.tojson(d) varchar, system.tojson(day) varchar", `1 | 3E+1000000 | "2000-01-01"`, `2 | null | "-5877641-06-23"`)
	// psql shows the nearest value the column's type has.
	if got := pgQuery(t, `SELECT concat_ws(' ', c, d, "d$exact" IS NOT NULL, day, "day$exact" IS NOT NULL) FROM exact.t ORDER BY c`); !slices.Equal(got,
		[]string{"1 Infinity t 2000-01-01 f", "2 f -infinity t", "3 1000 t 2024-01-01 f", "4 1000 f infinity t",
			"5 NaN t 1970-01-01 f", "6 0 f -infinity t"}) {
		t.Errorf("psql rows %q", got)
	}
	if got := pgQuery(t, `SELECT concat_ws(' ', k, "k$exact" IS NOT NULL, s, "s$exact" IS NOT NULL) FROM exact."t$static"`); !slices.Equal(got,
		[]string{"-infinity t NaN t"}) {
		t.Errorf("psql static rows %q", got)
	}
	// Repair carries exact values to a replica that lost them, and
	// reconciles a tie on write time by them.
	shardSQL(t, shardURLs[0], `DELETE FROM exact.t WHERE c = 3`, `UPDATE exact.t SET d = 5, "d$exact" = NULL WHERE c = 1`,
		`DELETE FROM exact."t$static"`)
	if _, err := gw.RepairPartition(context.Background(), "exact", "t", []byte{0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	first := replicaData(t, shardURLs[0], "exact", "t")
	for _, u := range shardURLs[1:] {
		if got := replicaData(t, u, "exact", "t"); !slices.Equal(got, first) {
			t.Errorf("replicas differ after repair:\n%s\n%s", strings.Join(got, "\n"), strings.Join(first, "\n"))
		}
	}
	wantRows(t, sess.Query("SELECT c, toJson(d), toJson(s) FROM exact.t WHERE k = "+k+" AND c IN (1, 3)").Consistency(gocql.One),
		"c int, system.tojson(d) varchar, system.tojson(s) varchar", "1 | 3E+1000000 | -1E-1000000", "3 | 1E+3 | -1E-1000000")
}
