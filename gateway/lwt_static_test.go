package gateway_test

import (
	"testing"
)

// TestLWTStaticColumns runs Cassandra's conditional UPDATEs and DELETEs of
// static columns: by partition when they name static columns alone, by
// row when a condition names a regular column, with Cassandra's results.
func TestLWTStaticColumns(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE lwt_static WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE lwt_static.t (pk int, ck int, static_col int static, value int, PRIMARY KEY (pk, ck))")
	t.Cleanup(func() { exec(t, sess, "DROP KEYSPACE IF EXISTS lwt_static") })
	for _, r := range [][3]int{{1, 1, 2}, {1, 3, 4}, {1, 5, 6}, {1, 7, 8}, {2, 1, 2}} {
		if err := sess.Query("INSERT INTO lwt_static.t (pk, ck, value) VALUES (?, ?, ?)", r[0], r[1], r[2]).Exec(); err != nil {
			t.Fatal(err)
		}
	}
	exec(t, sess, "INSERT INTO lwt_static.t (pk, static_col) VALUES (1, 1)")
	rows := func(want ...string) {
		t.Helper()
		wantRows(t, sess.Query("SELECT pk, ck, static_col, value FROM lwt_static.t WHERE pk = 1"), "", want...)
	}
	runCAS(t, sess, []casCase{
		{stmt: "UPDATE lwt_static.t SET static_col = ? WHERE pk = ? AND ck = ? IF value = ?", args: []any{3, 1, 1, 3},
			cols: applied + ", value int", rows: []string{"false | 2"}},
		{stmt: "UPDATE lwt_static.t SET static_col = ? WHERE pk = ? AND ck = ? IF value = ?", args: []any{5, 1, 1, 2},
			cols: applied, rows: []string{"true"}},
	})
	rows("1 | 1 | 5 | 2", "1 | 3 | 5 | 4", "1 | 5 | 5 | 6", "1 | 7 | 5 | 8")
	runCAS(t, sess, []casCase{
		{stmt: "DELETE static_col FROM lwt_static.t WHERE pk = ? AND ck = ? IF value = ?", args: []any{1, 5, 10},
			cols: applied + ", value int", rows: []string{"false | 6"}},
		{stmt: "DELETE static_col FROM lwt_static.t WHERE pk = ? AND ck = ? IF value = ?", args: []any{1, 5, 6},
			cols: applied, rows: []string{"true"}},
	})
	rows("1 | 1 | null | 2", "1 | 3 | null | 4", "1 | 5 | null | 6", "1 | 7 | null | 8")
}
