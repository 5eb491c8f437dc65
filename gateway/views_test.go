package gateway_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
	"github.com/jackc/pgx/v5"

	"github.com/cqlpg/cqlpg/gateway/repair"
)

// viewRows returns the rows a query gives, each as its columns' values
// joined by ':', sorted.
func viewRows(t *testing.T, sess *gocql.Session, q string, args ...any) []string {
	t.Helper()
	iter := sess.Query(q, args...).Iter()
	var out []string
	for {
		row := map[string]any{}
		if !iter.MapScan(row) {
			break
		}
		cols := iter.Columns()
		parts := make([]string, len(cols))
		for i, c := range cols {
			parts[i] = fmt.Sprint(row[c.Name])
		}
		out = append(out, strings.Join(parts, ":"))
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	slices.Sort(out)
	return out
}

// TestViewMaintenance writes, updates, deletes and expires base rows of
// two views, one keyed by a regular base column, and reads the views
// after each write: each shows what its base defines, at once.
func TestViewMaintenance(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS mv WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"DROP MATERIALIZED VIEW IF EXISTS mv.by_v",
		"DROP MATERIALIZED VIEW IF EXISTS mv.by_c",
		"DROP TABLE IF EXISTS mv.t",
		"CREATE TABLE mv.t (k int, c int, v text, w int, PRIMARY KEY (k, c))")
	if err := sess.Query("CREATE MATERIALIZED VIEW mv.by_v AS SELECT * FROM mv.t " +
		"WHERE v IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, k, c)").Exec(); err != nil {
		t.Fatal(err)
	}
	exec(t, sess, "CREATE MATERIALIZED VIEW mv.by_c AS SELECT k, c, w FROM mv.t WHERE c IS NOT NULL AND k IS NOT NULL "+
		"PRIMARY KEY (c, k) WITH CLUSTERING ORDER BY (k DESC)")
	check := func(step string, byV, byC []string) {
		t.Helper()
		if got := viewRows(t, sess, "SELECT v, k, c, w FROM mv.by_v"); !slices.Equal(got, byV) {
			t.Errorf("%s: by_v = %q, want %q", step, got, byV)
		}
		if got := viewRows(t, sess, "SELECT c, k, w FROM mv.by_c"); !slices.Equal(got, byC) {
			t.Errorf("%s: by_c = %q, want %q", step, got, byC)
		}
	}
	exec(t, sess, "INSERT INTO mv.t (k, c, v, w) VALUES (1, 1, 'a', 10)", "INSERT INTO mv.t (k, c, w) VALUES (1, 2, 20)")
	check("insert", []string{"a:1:1:10"}, []string{"1:1:10", "2:1:20"})
	exec(t, sess, "UPDATE mv.t SET v = 'b' WHERE k = 1 AND c = 1")
	check("move", []string{"b:1:1:10"}, []string{"1:1:10", "2:1:20"})
	exec(t, sess, "UPDATE mv.t SET v = 'a', w = 11 WHERE k = 1 AND c = 1")
	check("move back", []string{"a:1:1:11"}, []string{"1:1:11", "2:1:20"})
	exec(t, sess, "DELETE v FROM mv.t WHERE k = 1 AND c = 1")
	check("cell delete", nil, []string{"1:1:11", "2:1:20"})
	exec(t, sess, "UPDATE mv.t SET v = 'c' WHERE k = 1 AND c = 2",
		"BEGIN BATCH UPDATE mv.t SET v = 'd' WHERE k = 2 AND c = 1; INSERT INTO mv.t (k, c, v) VALUES (3, 1, 'e'); APPLY BATCH")
	check("batch", []string{"c:1:2:20", "d:2:1:0", "e:3:1:0"}, []string{"1:1:11", "1:2:0", "1:3:0", "2:1:20"})
	exec(t, sess, "DELETE FROM mv.t WHERE k = 1")
	check("partition delete", []string{"d:2:1:0", "e:3:1:0"}, []string{"1:2:0", "1:3:0"})
	exec(t, sess, "UPDATE mv.t USING TTL 1 SET v = 'f' WHERE k = 3 AND c = 1")
	check("ttl", []string{"d:2:1:0", "f:3:1:0"}, []string{"1:2:0", "1:3:0"})
	time.Sleep(2100 * time.Millisecond)
	check("expired", []string{"d:2:1:0"}, []string{"1:2:0", "1:3:0"})
	if got := viewRows(t, sess, "SELECT k FROM mv.by_c WHERE c = 1"); !slices.Equal(got, []string{"2", "3"}) {
		t.Errorf("by_c partition read = %q", got)
	}
}

// TestViewSchema builds a view over a table that holds rows, in the
// background, and checks what Cassandra shows of it: the build's status
// tables, system_schema.views and .columns, DESCRIBE, and the refusals of
// what a view does not allow, each with Cassandra's text.
func TestViewSchema(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS mvs WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"DROP MATERIALIZED VIEW IF EXISTS mvs.by_v",
		"DROP TABLE IF EXISTS mvs.t",
		"CREATE TABLE mvs.t (k int, c int, v int, b text, PRIMARY KEY (k, c))") // b: the name of an alias in the build's SQL
	const rows = 3000
	for i := range rows {
		if err := sess.Query("INSERT INTO mvs.t (k, c, v, b) VALUES (?, ?, ?, ?)", i%100, i/100, i%7, fmt.Sprint(i)).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, sess, "CREATE MATERIALIZED VIEW mvs.by_v AS SELECT k, c, v FROM mvs.t WHERE v IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL "+
		"AND c < 20 PRIMARY KEY (v, c, k) WITH comment = 'by v'")
	deadline := time.Now().Add(30 * time.Second)
	for {
		built := viewRows(t, sess, "SELECT keyspace_name, view_name, status_replicated FROM system.built_views WHERE keyspace_name = 'mvs'")
		if slices.Equal(built, []string{"mvs:by_v:true"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("view not built after 30 s: %q", built)
		}
		time.Sleep(100 * time.Millisecond)
	}
	status := viewRows(t, sess, "SELECT status FROM system_distributed.view_build_status WHERE keyspace_name = 'mvs' AND view_name = 'by_v'")
	if len(status) != len(shardURLs) || slices.ContainsFunc(status, func(s string) bool { return s != "SUCCESS" }) {
		t.Errorf("view_build_status = %q, want SUCCESS for each of %d shards", status, len(shardURLs))
	}
	// The build and a write made after it agree with the base.
	exec(t, sess, "UPDATE mvs.t SET v = 100 WHERE k = 5 AND c = 3")
	var n int
	if err := sess.Query("SELECT count(*) FROM mvs.by_v").Scan(&n); err != nil || n != 2000 {
		t.Errorf("view rows = %d (%v), want 2000 (c < 20)", n, err)
	}
	if got := viewRows(t, sess, "SELECT k, c FROM mvs.by_v WHERE v = 100"); !slices.Equal(got, []string{"5:3"}) {
		t.Errorf("v = 100: %q", got)
	}
	if got := viewRows(t, sess, "SELECT c FROM mvs.by_v WHERE v = 3 AND c = 2"); len(got) != 14 {
		t.Errorf("v = 3 AND c = 2: %d rows, want 14", len(got))
	}

	if got := viewRows(t, sess, "SELECT view_name, base_table_name, include_all_columns, where_clause, comment FROM system_schema.views "+
		"WHERE keyspace_name = 'mvs'"); !slices.Equal(got, []string{"by_v:t:false:v IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL AND c < 20:by v"}) {
		t.Errorf("system_schema.views = %q", got)
	}
	km, err := sess.KeyspaceMetadata("mvs")
	if err != nil {
		t.Fatal(err)
	}
	if mv := km.MaterializedViews["by_v"]; mv == nil || mv.BaseTable == nil || mv.BaseTable.Name != "t" || mv.IncludeAllColumns || mv.Comment != "by v" {
		t.Errorf("gocql's view metadata: %+v", mv)
	}
	if got := viewRows(t, sess, "SELECT table_name FROM system_schema.tables WHERE keyspace_name = 'mvs'"); !slices.Equal(got, []string{"t"}) {
		t.Errorf("system_schema.tables = %q", got)
	}
	if got := viewRows(t, sess, "SELECT column_name, kind, position FROM system_schema.columns WHERE keyspace_name = 'mvs' AND table_name = 'by_v'"); !slices.Equal(got,
		[]string{"c:clustering:0", "k:clustering:1", "v:partition_key:0"}) {
		t.Errorf("system_schema.columns = %q", got)
	}
	desc := describeRows(t, sess, "DESCRIBE MATERIALIZED VIEW mvs.by_v", "keyspace_name", "type", "name", "create_statement")
	wantDesc := "mvs | materialized_view | by_v | CREATE MATERIALIZED VIEW mvs.by_v AS\n    SELECT v, c, k\n    FROM mvs.t\n" +
		"    WHERE v IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL AND c < 20\n    PRIMARY KEY (v, c, k)\n" +
		" WITH CLUSTERING ORDER BY (c ASC, k ASC)\n    AND additional_write_policy = '99p'\n"
	if len(desc) != 1 || !strings.HasPrefix(desc[0], wantDesc) || !strings.Contains(desc[0], "AND comment = 'by v'") ||
		strings.Contains(desc[0], "default_time_to_live") {
		t.Errorf("DESCRIBE MATERIALIZED VIEW:\n%s", strings.Join(desc, "\n"))
	}
	table := describeRows(t, sess, "DESCRIBE TABLE mvs.t", "keyspace_name", "type", "name", "create_statement")
	if len(table) != 2 || !strings.HasPrefix(table[1], "mvs | materialized_view | by_v | ") {
		t.Errorf("DESCRIBE TABLE lists %d elements, want the table and its view", len(table))
	}

	for stmt, want := range map[string]string{
		"INSERT INTO mvs.by_v (v, c, k) VALUES (1, 1, 1)":                 "Cannot directly modify a materialized view",
		"DELETE FROM mvs.by_v WHERE v = 1":                                "Cannot directly modify a materialized view",
		"DROP TABLE mvs.t":                                                "Cannot drop table when materialized views still depend on it (mvs.{by_v})",
		"DROP TABLE mvs.by_v":                                             "Cannot use DROP TABLE on a materialized view. Please use DROP MATERIALIZED VIEW instead.",
		"ALTER TABLE mvs.by_v ADD x int":                                  "Cannot use ALTER TABLE on a materialized view; use ALTER MATERIALIZED VIEW instead",
		"ALTER TABLE mvs.t DROP b":                                        "Cannot drop column b on base table t with materialized views",
		"TRUNCATE mvs.by_v":                                               "Cannot TRUNCATE materialized view directly; must truncate base table instead",
		"CREATE INDEX ON mvs.by_v (k)":                                    "Secondary indexes are not supported on materialized views",
		"ALTER MATERIALIZED VIEW mvs.by_v WITH default_time_to_live = 10": "Forbidden default_time_to_live detected for a materialized view. Data in a materialized view always expire at the same time than the corresponding data in the parent table. default_time_to_live must be set to zero, see CASSANDRA-12868 for more information",
		"ALTER MATERIALIZED VIEW mvs.nope WITH comment = 'x'":             "Materialized view 'mvs.nope' doesn't exist",
		"DROP MATERIALIZED VIEW mvs.t":                                    "Materialized view 'mvs.t' doesn't exist",
		"CREATE MATERIALIZED VIEW mvs.by_v AS SELECT * FROM mvs.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k)":                                        "Cannot add already existing table \"by_v\" to keyspace \"mvs\"",
		"CREATE MATERIALIZED VIEW mvs.t AS SELECT * FROM mvs.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k)":                                           "Cannot create materialized view 't' - a table with the same name already exists",
		"CREATE MATERIALIZED VIEW mvs.m AS SELECT * FROM mvs.nope WHERE k IS NOT NULL PRIMARY KEY (k)":                                                             "Base table 'nope' doesn't exist",
		"CREATE MATERIALIZED VIEW mvs.m AS SELECT * FROM mvs.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (k)":                                              "Cannot create materialized view 'm' without primary key columns c from base table 't'",
		"CREATE MATERIALIZED VIEW mvs.m AS SELECT * FROM mvs.t WHERE k IS NOT NULL AND c IS NOT NULL AND v IS NOT NULL AND b IS NOT NULL PRIMARY KEY (v, b, k, c)": "Cannot include more than one non-primary key column in materialized view primary key (got v, b)",
		"CREATE MATERIALIZED VIEW mvs.m AS SELECT * FROM mvs.t WHERE k IS NOT NULL PRIMARY KEY (c, k)":                                                             "Primary key columns c must be restricted with 'IS NOT NULL' or otherwise",
		"CREATE MATERIALIZED VIEW mvs.m AS SELECT * FROM mvs.t WHERE k IS NOT NULL AND c IS NOT NULL AND v = 1 PRIMARY KEY (c, k)":                                 "Non-primary key columns can only be restricted with 'IS NOT NULL' (got: v restricted illegally)",
		"CREATE MATERIALIZED VIEW mvs.m AS SELECT k, c AS x FROM mvs.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k)":                                   "Cannot use aliases when defining a materialized view (got c AS x)",
		"CREATE MATERIALIZED VIEW mvs.m AS SELECT k, c FROM mvs.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, c, k)":                                     "Unknown column 'v' referenced in PRIMARY KEY for materialized view 'm'",
		"CREATE MATERIALIZED VIEW mvs.m AS SELECT * FROM mvs.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k) WITH default_time_to_live = 5":             "Cannot set default_time_to_live for a materialized view. Data in a materialized view always expire at the same time than the corresponding data in the parent table.",
		"CREATE MATERIALIZED VIEW mvs.m AS SELECT * FROM mvs.by_v WHERE k IS NOT NULL AND c IS NOT NULL AND v IS NOT NULL PRIMARY KEY (c, k, v)":                   "Materialized views cannot be created against other materialized views",
	} {
		err := sess.Query(stmt).Exec()
		if err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", stmt, err, want)
		}
	}
	exec(t, sess, "ALTER MATERIALIZED VIEW mvs.by_v WITH comment = 'changed'")
	if got := viewRows(t, sess, "SELECT comment FROM system_schema.views WHERE keyspace_name = 'mvs' AND view_name = 'by_v'"); !slices.Equal(got, []string{"changed"}) {
		t.Errorf("comment after ALTER MATERIALIZED VIEW = %q", got)
	}
	exec(t, sess, "TRUNCATE mvs.t")
	if err := sess.Query("SELECT count(*) FROM mvs.by_v").Scan(&n); err != nil || n != 0 {
		t.Errorf("view rows after TRUNCATE of the base = %d (%v)", n, err)
	}
	// A key column renamed in the base is renamed in its views, WHERE
	// clause included, and writes keep them.
	exec(t, sess, "ALTER TABLE mvs.t RENAME c TO cc", "INSERT INTO mvs.t (k, cc, v) VALUES (1, 2, 3)",
		"INSERT INTO mvs.t (k, cc, v) VALUES (1, 30, 3)")
	if got := viewRows(t, sess, "SELECT where_clause FROM system_schema.views WHERE keyspace_name = 'mvs' AND view_name = 'by_v'"); !slices.Equal(got,
		[]string{"v IS NOT NULL AND k IS NOT NULL AND cc IS NOT NULL AND cc < 20"}) {
		t.Errorf("WHERE clause after RENAME: %q", got)
	}
	if got := viewRows(t, sess, "SELECT k, cc FROM mvs.by_v WHERE v = 3"); !slices.Equal(got, []string{"1:2"}) {
		t.Errorf("view after RENAME: %q", got)
	}
	exec(t, sess, "DROP MATERIALIZED VIEW mvs.by_v", "DROP TABLE mvs.t")
}

// TestViewRepair damages views behind the gateway's back, as plain SQL on
// the shards can: a view row no base row defines, a view row removed, and
// a view cell older than its base's. A repair of the view compares it
// with its base and mends all three.
func TestViewRepair(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS mvr WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"DROP MATERIALIZED VIEW IF EXISTS mvr.by_v", "DROP MATERIALIZED VIEW IF EXISTS mvr.by_c", "DROP TABLE IF EXISTS mvr.t",
		"CREATE TABLE mvr.t (k int, c int, v int, w int, PRIMARY KEY (k, c))",
		"CREATE MATERIALIZED VIEW mvr.by_v AS SELECT * FROM mvr.t WHERE v IS NOT NULL AND k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, k, c)",
		"CREATE MATERIALIZED VIEW mvr.by_c AS SELECT k, c FROM mvr.t WHERE k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (c, k)")
	for k := range 10 {
		exec(t, sess, fmt.Sprintf("INSERT INTO mvr.t (k, c, v, w) VALUES (%d, 1, %d, %d)", k, k%3, k*10))
	}
	wantV := viewRows(t, sess, "SELECT v, k, c, w FROM mvr.by_v")
	wantC := viewRows(t, sess, "SELECT c, k FROM mvr.by_c")
	if len(wantV) != 10 || len(wantC) != 10 {
		t.Fatalf("views before the damage: %q %q", wantV, wantC)
	}
	ctx := context.Background()
	for _, u := range shardURLs {
		conn, err := pgx.Connect(ctx, u) // plain SQL, as psql writes
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{
			"INSERT INTO mvr.by_v (v, k, c, w) VALUES (7, 1, 1, 1)",
			"INSERT INTO mvr.by_c (c, k) VALUES (5, 77)",
			"DELETE FROM mvr.by_v WHERE k = 2",
			`UPDATE mvr.by_v SET w = 777, "w$wt" = 1 WHERE k = 3`,
		} {
			if _, err := conn.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		conn.Close(ctx)
	}
	if got := viewRows(t, sess, "SELECT v, k, c, w FROM mvr.by_v"); slices.Equal(got, wantV) {
		t.Fatal("the damage does not show: the test proves less than it says")
	}
	res, err := gw.Repair(ctx, repair.Options{Keyspace: "mvr", Table: "by_v"})
	if err != nil {
		t.Fatal(err)
	}
	if got := viewRows(t, sess, "SELECT v, k, c, w FROM mvr.by_v"); !slices.Equal(got, wantV) {
		t.Errorf("by_v after repair:\n%q\nwant\n%q", got, wantV)
	}
	if res.Views.Undefined == 0 || res.Views.Relogged < 10 {
		t.Errorf("repair of by_v: %+v", res.Views)
	}
	res, err = gw.Repair(ctx, repair.Options{Keyspace: "mvr", Table: "by_c"})
	if err != nil {
		t.Fatal(err)
	}
	if got := viewRows(t, sess, "SELECT c, k FROM mvr.by_c"); !slices.Equal(got, wantC) {
		t.Errorf("by_c after repair:\n%q\nwant\n%q", got, wantC)
	}
	t.Logf("repair of by_c: %+v", res.Views)
}
