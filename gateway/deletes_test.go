package gateway_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/gocql/gocql"
)

// TestDeletionsShadowLaterOlderWrites checks that partition, prefix and
// range deletions shadow writes that arrive later with an older timestamp,
// also to rows that did not exist when the deletion ran, as Cassandra's
// partition and range tombstones do; newer writes stay.
func TestDeletionsShadowLaterOlderWrites(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE shadow WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
		"CREATE TABLE shadow.t (k int, c int, v int, w int, PRIMARY KEY (k, c))",
		"CREATE TABLE shadow.d (k int, c int, v int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (c DESC)",
		"CREATE TABLE shadow.p (k int, c1 int, c2 int, v int, s int STATIC, PRIMARY KEY (k, c1, c2))",
		"CREATE TABLE shadow.u (k int, c timeuuid, v int, PRIMARY KEY (k, c))")

	write := func(stmt string, ts int64, args ...any) {
		t.Helper()
		if err := sess.Query(stmt, args...).WithTimestamp(ts).Exec(); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	check := func(query string, want ...int) {
		t.Helper()
		if got := ints(t, sess, query); !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("%s: %v, want %v", query, got, want)
		}
	}

	// A whole partition.
	write("DELETE FROM shadow.t WHERE k = 1", 100)
	write("INSERT INTO shadow.t (k, c, v) VALUES (1, 1, 1)", 50)
	write("UPDATE shadow.t SET v = 2 WHERE k = 1 AND c = 2", 100) // a tie goes to the deletion
	write("INSERT INTO shadow.t (k, c, v) VALUES (1, 3, 3)", 150)
	check("SELECT c FROM shadow.t WHERE k = 1", 3)
	// The row written after the deletion remembers it: an older write of
	// another of its cells stays shadowed.
	write("UPDATE shadow.t SET w = 9 WHERE k = 1 AND c = 3", 60)
	check("SELECT w FROM shadow.t WHERE k = 1 AND c = 3", 0)
	var w *int
	if err := sess.Query("SELECT w FROM shadow.t WHERE k = 1 AND c = 3").Scan(&w); err != nil || w != nil {
		t.Errorf("older write of w after the deletion: %v %v", w, err)
	}

	// A clustering slice, bounds included or not; the other rows of the
	// partition are not covered.
	write("DELETE FROM shadow.t WHERE k = 2 AND c >= 2 AND c < 5", 100)
	for c := 0; c <= 6; c++ {
		write("INSERT INTO shadow.t (k, c, v) VALUES (2, ?, ?)", 50, c, c)
	}
	check("SELECT c FROM shadow.t WHERE k = 2", 0, 1, 5, 6)
	// The same in a DESC table, by value.
	write("DELETE FROM shadow.d WHERE k = 2 AND c > 2 AND c <= 5", 100)
	for c := 0; c <= 6; c++ {
		write("INSERT INTO shadow.d (k, c, v) VALUES (2, ?, ?)", 50, c, c)
	}
	check("SELECT c FROM shadow.d WHERE k = 2", 6, 2, 1, 0)

	// A clustering prefix, and a partition deletion covering statics.
	write("DELETE FROM shadow.p WHERE k = 1 AND c1 = 2", 100)
	write("INSERT INTO shadow.p (k, c1, c2, v) VALUES (1, 2, 7, 1)", 50)
	write("INSERT INTO shadow.p (k, c1, c2, v) VALUES (1, 3, 7, 1)", 50)
	check("SELECT c1 FROM shadow.p WHERE k = 1", 3)
	write("DELETE FROM shadow.p WHERE k = 2", 100)
	write("UPDATE shadow.p SET s = 5 WHERE k = 2", 50)
	write("INSERT INTO shadow.p (k, c1, c2, v) VALUES (2, 1, 1, 1)", 50)
	check("SELECT s FROM shadow.p WHERE k = 2")
	write("UPDATE shadow.p SET s = 6 WHERE k = 2", 101)
	check("SELECT s FROM shadow.p WHERE k = 2", 6)
	// Range deletions, of one column or of a tuple, leave statics alone:
	// older static writes before and after them stay.
	write("UPDATE shadow.p SET s = 7 WHERE k = 3", 50)
	write("DELETE FROM shadow.p WHERE k = 3 AND c1 > 0", 100)
	write("DELETE FROM shadow.p WHERE k = 3 AND (c1, c2) > (0, 0)", 100)
	check("SELECT s FROM shadow.p WHERE k = 3", 7)
	write("UPDATE shadow.p SET s = 8 WHERE k = 3", 60)
	check("SELECT s FROM shadow.p WHERE k = 3", 8)

	// Order-keyed clustering columns compare by Cassandra's order.
	// ffffffff-0000-1000-... is later in byte order than 00000000-0001-1000-...
	// but earlier in time, which is what a timeuuid's order follows.
	bound, before := "00000000-0001-1000-8000-000000000000", "ffffffff-0000-1000-8000-000000000000"
	write("DELETE FROM shadow.u WHERE k = 1 AND c <= "+bound, 100)
	write("INSERT INTO shadow.u (k, c, v) VALUES (1, "+before+", 1)", 50)
	write("INSERT INTO shadow.u (k, c, v) VALUES (1, ?, 2)", 50, gocql.TimeUUID())
	check("SELECT v FROM shadow.u WHERE k = 1", 2)

	// Deleting the same range twice keeps the newer time.
	write("DELETE FROM shadow.t WHERE k = 3 AND c > 0", 100)
	write("DELETE FROM shadow.t WHERE k = 3 AND c > 0", 80)
	write("INSERT INTO shadow.t (k, c, v) VALUES (3, 1, 1)", 90)
	check("SELECT c FROM shadow.t WHERE k = 3")
	if got := pgQuery(t, `SELECT count(*)::text || ' ' || max("_del_wt")::text FROM shadow."t$deletions" WHERE k = 3`); len(got) != 1 || got[0] != "1 100" {
		t.Errorf("recorded deletions of partition 3: %v", got)
	}
}

// TestNullAndUnset checks that null deletes a cell and unset leaves it.
func TestNullAndUnset(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE nullset WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE nullset.t (k int PRIMARY KEY, v int, w int)",
		"INSERT INTO nullset.t (k, v, w) VALUES (1, 1, 1)")
	if err := sess.Query("INSERT INTO nullset.t (k, v, w) VALUES (1, ?, ?)", nil, gocql.UnsetValue).Exec(); err != nil {
		t.Fatal(err)
	}
	var v, w *int
	if err := sess.Query("SELECT v, w FROM nullset.t WHERE k = 1").Scan(&v, &w); err != nil || v != nil || w == nil || *w != 1 {
		t.Errorf("after null and unset: v %v, w %v, %v", v, w, err)
	}
}

// TestDeletionsShadowConcurrentWrites runs prefix deletions and older
// writes of rows they cover side by side, each pair on one partition: the
// deletion shadows the row whichever reaches the shard first, also when
// the two run at the same moment on two of its connections (a replica the
// client did not wait for gets a deletion and the next write together).
// Half of the deletions come in batches, which run their own transaction.
func TestDeletionsShadowConcurrentWrites(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE shadowrace WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE shadowrace.p (k int, c1 int, c2 int, v int, PRIMARY KEY (k, c1, c2))")
	const partitions = 400
	var wg sync.WaitGroup
	inFlight := make(chan struct{}, 16)
	for k := range partitions {
		inFlight <- struct{}{}
		wg.Go(func() {
			const del = "DELETE FROM shadowrace.p WHERE k = ? AND c1 = 2"
			var err error
			if k%2 == 0 {
				err = sess.Query(del, k).WithTimestamp(100).Exec()
			} else {
				b := sess.NewBatch(gocql.UnloggedBatch).WithTimestamp(100)
				b.Query(del, k)
				b.Query("INSERT INTO shadowrace.p (k, c1, c2, v) VALUES (?, 3, 0, 0)", k)
				err = sess.ExecuteBatch(b)
			}
			if err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			defer func() { <-inFlight }()
			if err := sess.Query("INSERT INTO shadowrace.p (k, c1, c2, v) VALUES (?, 2, 7, 1)", k).WithTimestamp(50).Exec(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	escaped := 0
	for k := range partitions {
		if got := ints(t, sess, "SELECT c1 FROM shadowrace.p WHERE k = ? AND c1 = 2", k); len(got) > 0 {
			escaped++
		}
	}
	if escaped > 0 {
		t.Errorf("%d of %d partitions hold a row their deletion shadows", escaped, partitions)
	}
}
