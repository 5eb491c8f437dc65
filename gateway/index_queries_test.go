package gateway_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestIndexQueries plans index queries as Cassandra does: an index on a
// clustering column answers it alone and lets it be restricted past an
// unrestricted one; an index on a static column finds partitions, those
// with only static data included; none of these needs ALLOW FILTERING.
func TestIndexQueries(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE index_queries WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE index_queries.t (k int, c int, v int, s int STATIC, PRIMARY KEY (k, c))",
		"CREATE INDEX ON index_queries.t (c)",
		"CREATE INDEX ON index_queries.t (v)",
		"CREATE INDEX ON index_queries.t (s)",
		"CREATE TABLE index_queries.ck (k1 int, k2 int, c1 int, c2 int, v int, PRIMARY KEY ((k1, k2), c1, c2))",
		"CREATE INDEX ON index_queries.ck (k1)",
		"CREATE INDEX ON index_queries.ck (c2)",
		"INSERT INTO index_queries.t (k, c, v, s) VALUES (0, 2, 1, 5)",
		"INSERT INTO index_queries.t (k, c, v) VALUES (0, 3, 1)",
		"INSERT INTO index_queries.t (k, c, v, s) VALUES (4, 2, 7, 6)",
		"INSERT INTO index_queries.t (k, s) VALUES (1, 5)",
		"INSERT INTO index_queries.ck (k1, k2, c1, c2, v) VALUES (1, 2, 3, 4, 5)",
		"INSERT INTO index_queries.ck (k1, k2, c1, c2, v) VALUES (1, 3, 3, 5, 6)")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS index_queries") })
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"SELECT k, c FROM index_queries.t WHERE k = 0 AND v = 1", []string{"0 2", "0 3"}},
		{"SELECT k, c FROM index_queries.t WHERE c = 2", []string{"0 2", "4 2"}},
		{"SELECT k, c FROM index_queries.t WHERE k = 0 AND c = 2", []string{"0 2"}},
		{"SELECT k, c, s FROM index_queries.t WHERE s = 5", []string{"1 null 5", "0 2 5", "0 3 5"}},
		{"SELECT k, s FROM index_queries.t WHERE s = 6", []string{"4 6"}},
		{"SELECT k1, k2, c2 FROM index_queries.ck WHERE k1 = 1", []string{"1 2 4", "1 3 5"}},
		{"SELECT k1, k2, c2 FROM index_queries.ck WHERE k1 = 1 AND k2 = 2 AND c2 = 4", []string{"1 2 4"}},
		{"SELECT k1, k2, c2 FROM index_queries.ck WHERE c2 = 5", []string{"1 3 5"}},
	} {
		got, err := queryRows(sess.Query(tc.query))
		if err != nil {
			t.Errorf("%s: %v", tc.query, err)
			continue
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tc.want))
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", tc.query, got, want)
		}
	}
	// Clustering-row writes and deletes leave the static index alone.
	exec(t, sess, "DELETE FROM index_queries.t WHERE k = 0 AND c = 2", "INSERT INTO index_queries.t (k, c, v) VALUES (1, 9, 9)")
	if got := ints(t, sess, "SELECT k FROM index_queries.t WHERE s = 5"); !slices.Equal(slices.Sorted(slices.Values(got)), []int{0, 1}) {
		t.Errorf("partitions with s = 5 after row writes: %v", got)
	}
}

// TestIndexPagingPlan checks that an index query reads a page from the
// index: the index on a regular column holds the rows' key after the
// value, so Postgres answers "the next rows with this value after a
// position, in key order" by an index scan that starts at the position
// and stops after the page, with no sort of every row with the value.
func TestIndexPagingPlan(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE index_paging WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE index_paging.t (k int, c int, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)",
		"CREATE INDEX t_v ON index_paging.t (v)")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS index_paging") })
	def := pgQuery(t, `SELECT pg_get_indexdef('index_paging.t_v'::regclass)`)
	if len(def) != 1 || !strings.HasSuffix(def[0], "(v, _token, k, c DESC)") {
		t.Fatalf("index definition %v, want the value then the key", def)
	}
	conn, err := pgx.Connect(context.Background(), shardURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// Rows written in SQL (the table's trigger fills in the rest), so that
	// Postgres plans for a table of some size.
	if _, err := conn.Exec(context.Background(), `INSERT INTO index_paging.t (k, c, v)
		SELECT i % 200, i, i % 20 FROM generate_series(1, 20000) i; ANALYZE index_paging.t`); err != nil {
		t.Fatal(err)
	}
	plan := ""
	rows, err := conn.Query(context.Background(), `EXPLAIN (COSTS OFF)
		SELECT k, c FROM index_paging.t WHERE v = 1 AND ROW(_token, k) >= ROW(0::bigint, 0)
		ORDER BY _token, k, c DESC LIMIT 10`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan += line + "\n"
	}
	if !strings.Contains(plan, "Scan using t_v") || strings.Contains(plan, "Sort") {
		t.Errorf("a page of an index query is not read from the index in order:\n%s", plan)
	}
}

// TestNotFilters filters with Cassandra 5.0's NOT IN, NOT CONTAINS and NOT
// CONTAINS KEY, on regular and clustering columns and collections, bound
// and literal; without ALLOW FILTERING they are refused as filtering.
func TestNotFilters(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE not_filters WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE not_filters.t (k int, c int, v int, s set<int>, m map<text, int>, PRIMARY KEY (k, c))",
		"INSERT INTO not_filters.t (k, c, v, s, m) VALUES (0, 1, 1, {1, 2}, {'a': 1})",
		"INSERT INTO not_filters.t (k, c, v, s, m) VALUES (0, 2, 2, {2, 3}, {'b': 2})",
		"INSERT INTO not_filters.t (k, c, v, s, m) VALUES (0, 3, 3, {3}, {'a': 3, 'c': 3})",
		"INSERT INTO not_filters.t (k, c) VALUES (0, 4)")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS not_filters") })
	for _, tc := range []struct {
		query string
		args  []any
		want  []int
	}{
		{"SELECT c FROM not_filters.t WHERE k = 0 AND v NOT IN (1, 3) ALLOW FILTERING", nil, []int{2}},
		{"SELECT c FROM not_filters.t WHERE k = 0 AND v NOT IN ? ALLOW FILTERING", []any{[]int{2}}, []int{1, 3}},
		{"SELECT c FROM not_filters.t WHERE k = 0 AND c NOT IN (1, 4) ALLOW FILTERING", nil, []int{2, 3}},
		{"SELECT c FROM not_filters.t WHERE k = 0 AND s NOT CONTAINS 2 ALLOW FILTERING", nil, []int{3}},
		{"SELECT c FROM not_filters.t WHERE k = 0 AND m NOT CONTAINS KEY 'a' ALLOW FILTERING", nil, []int{2}},
		{"SELECT c FROM not_filters.t WHERE k = 0 AND m NOT CONTAINS 2 ALLOW FILTERING", nil, []int{1, 3}},
	} {
		if got := ints(t, sess, tc.query, tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	requireCQLError(t, sess.Query("SELECT c FROM not_filters.t WHERE k = 0 AND v NOT IN (1)").Exec(), 0x2200,
		"Cannot execute this query as it might involve data filtering and thus may have unpredictable performance. "+
			"If you want to execute this query despite the performance unpredictability, use ALLOW FILTERING")
}
