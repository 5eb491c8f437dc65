package gateway_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gocql/gocql"
)

// TestTupleWrites runs UPDATE and DELETE with multi-column relations on
// clustering columns, as literals, markers and in batches: = writes one
// row, IN the rows of its tuples; slices in UPDATE are refused with
// Cassandra's text.
func TestTupleWrites(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE tuple_writes WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE tuple_writes.t (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2))")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS tuple_writes") })
	rows := func(want ...string) {
		t.Helper()
		wantRows(t, sess.Query("SELECT c1, c2, v FROM tuple_writes.t WHERE k = 0"), "", want...)
	}
	exec(t, sess,
		"UPDATE tuple_writes.t SET v = 1 WHERE k = 0 AND (c1, c2) = (1, 2)",
		"UPDATE tuple_writes.t SET v = 2 WHERE k = 0 AND (c1, c2) IN ((3, 4), (5, 6), (3, 4))",
		"UPDATE tuple_writes.t SET v = 3 WHERE k = 0 AND c1 = 7 AND (c2) IN ((8), (9))")
	// gocql 1.7 cannot bind a marker of tuple type ((c1, c2) = ?): it
	// counts the tuple's elements as values and then marshals the first
	// into the tuple; translate's TestTupleElement covers that binding.
	exec(t, sess, "UPDATE tuple_writes.t SET v = 4 WHERE k = 0 AND (c1, c2) = (10, 11)")
	if err := sess.Query("UPDATE tuple_writes.t SET v = 5 WHERE k = 0 AND (c1, c2) IN ?", [][]any{{12, 13}, {14, 15}}).Exec(); err != nil {
		t.Fatal(err)
	}
	if err := sess.Query("UPDATE tuple_writes.t SET v = 6 WHERE k = 0 AND (c1, c2) IN ((?, ?), (?, ?))", 16, 17, 18, 19).Exec(); err != nil {
		t.Fatal(err)
	}
	rows("1 | 2 | 1", "3 | 4 | 2", "5 | 6 | 2", "7 | 8 | 3", "7 | 9 | 3", "10 | 11 | 4", "12 | 13 | 5", "14 | 15 | 5", "16 | 17 | 6", "18 | 19 | 6")

	exec(t, sess,
		"DELETE FROM tuple_writes.t WHERE k = 0 AND (c1, c2) = (1, 2)",
		"DELETE FROM tuple_writes.t WHERE k = 0 AND (c1, c2) IN ((3, 4), (7, 9))",
		"DELETE v FROM tuple_writes.t WHERE k = 0 AND (c1, c2) = (5, 6)",
		"DELETE FROM tuple_writes.t WHERE k = 0 AND (c1) = (12)")
	if err := sess.Query("DELETE FROM tuple_writes.t WHERE k = 0 AND (c1, c2) IN ?", [][]any{{16, 17}, {18, 19}}).Exec(); err != nil {
		t.Fatal(err)
	}
	// (5, 6) was made by an UPDATE, so without v it has no live cell left.
	rows("7 | 8 | 3", "10 | 11 | 4", "14 | 15 | 5")

	b := sess.NewBatch(gocql.LoggedBatch)
	b.Query("UPDATE tuple_writes.t SET v = 7 WHERE k = 0 AND (c1, c2) IN ((20, 21), (22, 23))")
	b.Query("DELETE FROM tuple_writes.t WHERE k = 0 AND (c1, c2) = (?, ?)", 10, 11)
	b.Query("UPDATE tuple_writes.t SET v = 8 WHERE k = 1 AND (c1, c2) = (1, 1)")
	if err := sess.ExecuteBatch(b); err != nil {
		t.Fatal(err)
	}
	rows("7 | 8 | 3", "14 | 15 | 5", "20 | 21 | 7", "22 | 23 | 7")
	wantRows(t, sess.Query("SELECT c1, c2, v FROM tuple_writes.t WHERE k = 1"), "", "1 | 1 | 8")

	for _, tc := range []struct{ query, msg string }{
		{"UPDATE tuple_writes.t SET v = 1 WHERE k = 0 AND (c1, c2) > (1, 2)", "Slice restrictions are not supported on the clustering columns in UPDATE statements"},
		{"UPDATE tuple_writes.t SET v = 1 WHERE k = 0 AND (c2, c1) = (1, 2)", "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: (c2, c1)"},
		{"UPDATE tuple_writes.t SET v = 1 WHERE k = 0 AND (c1, v) = (1, 2)", "Multi-column relations can only be applied to clustering columns but was applied to: v"},
		{"UPDATE tuple_writes.t SET v = 1 WHERE k = 0 AND (c1) = (1)", "Some clustering keys are missing: c2"},
	} {
		requireCQLError(t, sess.Query(tc.query).Exec(), 0x2200, tc.msg)
	}
}

// TestTupleRangeDeletes deletes the rows after, or up to, a tuple of
// clustering values, or between two, alone and after a fixed prefix: the rows go, and a
// write with an older timestamp arriving later stays shadowed, as under
// Cassandra's range tombstone; newer writes show.
func TestTupleRangeDeletes(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"CREATE KEYSPACE tuple_ranges WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE tuple_ranges.t (k int, c1 int, c2 int, c3 int, v int, PRIMARY KEY (k, c1, c2, c3))")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS tuple_ranges") })
	fill := func(k int) {
		t.Helper()
		for c1 := range 3 {
			for c2 := range 3 {
				if err := sess.Query("INSERT INTO tuple_ranges.t (k, c1, c2, c3, v) VALUES (?, ?, ?, 0, 0) USING TIMESTAMP 1000",
					k, c1, c2).Exec(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	keys := func(k int, want ...string) {
		t.Helper()
		wantRows(t, sess.Query("SELECT c1, c2 FROM tuple_ranges.t WHERE k = ?", k), "", want...)
	}
	for k, tc := range []struct {
		delete  string
		want    []string
		deleted string // a row in the deleted range, "c1 | c2"; "" if the range is empty
	}{
		{"DELETE FROM tuple_ranges.t USING TIMESTAMP 2000 WHERE k = 0 AND (c1, c2) > (1, 1)",
			[]string{"0 | 0", "0 | 1", "0 | 2", "1 | 0", "1 | 1"}, "1 | 2"},
		{"DELETE FROM tuple_ranges.t USING TIMESTAMP 2000 WHERE k = 1 AND (c1, c2) >= (1, 1)",
			[]string{"0 | 0", "0 | 1", "0 | 2", "1 | 0"}, "1 | 1"},
		{"DELETE FROM tuple_ranges.t USING TIMESTAMP 2000 WHERE k = 2 AND (c1, c2) < (1, 1)",
			[]string{"1 | 1", "1 | 2", "2 | 0", "2 | 1", "2 | 2"}, "1 | 0"},
		{"DELETE FROM tuple_ranges.t USING TIMESTAMP 2000 WHERE k = 3 AND (c1, c2) <= (1, 1)",
			[]string{"1 | 2", "2 | 0", "2 | 1", "2 | 2"}, "1 | 1"},
		{"DELETE FROM tuple_ranges.t USING TIMESTAMP 2000 WHERE k = 4 AND c1 = 1 AND (c2, c3) > (0, 0)",
			[]string{"0 | 0", "0 | 1", "0 | 2", "1 | 0", "2 | 0", "2 | 1", "2 | 2"}, "1 | 1"},
		// Bounded on both sides: the ranges depend on the bounds' values.
		{"DELETE FROM tuple_ranges.t USING TIMESTAMP 2000 WHERE k = 5 AND (c1, c2) > (0, 1) AND (c1, c2) < (2, 1)",
			[]string{"0 | 0", "0 | 1", "2 | 1", "2 | 2"}, "0 | 2"},
		{"DELETE FROM tuple_ranges.t USING TIMESTAMP 2000 WHERE k = 6 AND (c1, c2) >= (1, 0) AND (c1, c2) <= (1, 2)",
			[]string{"0 | 0", "0 | 1", "0 | 2", "2 | 0", "2 | 1", "2 | 2"}, "1 | 1"},
		{"DELETE FROM tuple_ranges.t USING TIMESTAMP 2000 WHERE k = 7 AND (c1, c2) <= (1, 1) AND (c1, c2) >= (1, 1)",
			[]string{"0 | 0", "0 | 1", "0 | 2", "1 | 0", "1 | 2", "2 | 0", "2 | 1", "2 | 2"}, "1 | 1"},
		// Empty: nothing is deleted, so no row is in the range.
		{"DELETE FROM tuple_ranges.t USING TIMESTAMP 2000 WHERE k = 8 AND (c1, c2) > (2, 0) AND (c1, c2) < (1, 0)",
			[]string{"0 | 0", "0 | 1", "0 | 2", "1 | 0", "1 | 1", "1 | 2", "2 | 0", "2 | 1", "2 | 2"}, ""},
		{"DELETE FROM tuple_ranges.t USING TIMESTAMP 2000 WHERE k = 9 AND (c1, c2) >= (0, 2) AND (c1, c2) < (1, 1)",
			[]string{"0 | 0", "0 | 1", "1 | 1", "1 | 2", "2 | 0", "2 | 1", "2 | 2"}, "1 | 0"},
	} {
		fill(k)
		exec(t, sess, tc.delete)
		keys(k, tc.want...)
		// Older writes into the deleted range stay deleted; newer show.
		fill(k)
		keys(k, tc.want...)
		if tc.deleted == "" {
			continue
		}
		if slices.Contains(tc.want, tc.deleted) {
			t.Fatalf("%s: (%s) is not in the deleted range", tc.delete, tc.deleted)
		}
		var c1, c2 int
		if _, err := fmt.Sscanf(tc.deleted, "%d | %d", &c1, &c2); err != nil {
			t.Fatal(err)
		}
		exec(t, sess, fmt.Sprintf("INSERT INTO tuple_ranges.t (k, c1, c2, c3, v) VALUES (%d, %d, %d, 0, 1) USING TIMESTAMP 3000", k, c1, c2))
		keys(k, slices.Sorted(slices.Values(append(slices.Clone(tc.want), tc.deleted)))...)
	}
	requireCQLError(t, sess.Query("DELETE FROM tuple_ranges.t WHERE k = 0 AND (c1, c2) > (1, 1) AND (c1) < (2)").Exec(),
		0x2200, "Multi-column relations are not supported in DELETE statements")
}
