package gateway_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gocql/gocql"
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
