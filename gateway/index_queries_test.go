package gateway_test

import (
	"slices"
	"testing"
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
