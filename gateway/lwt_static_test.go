package gateway_test

import (
	"slices"
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
	cas := func(q string, args ...any) (bool, []any) {
		t.Helper()
		m := map[string]any{}
		applied, err := sess.Query(q, args...).MapScanCAS(m)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var vals []any
		for _, k := range []string{"value", "static_col"} {
			if v, ok := m[k]; ok {
				vals = append(vals, v)
			}
		}
		return applied, vals
	}
	rows := func() []string {
		t.Helper()
		got, err := queryRows(sess.Query("SELECT pk, ck, static_col, value FROM lwt_static.t WHERE pk = 1"))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if ok, vals := cas("UPDATE lwt_static.t SET static_col = ? WHERE pk = ? AND ck = ? IF value = ?", 3, 1, 1, 3); ok ||
		!slices.Equal(vals, []any{2}) {
		t.Errorf("static update if value (false): %v %v", ok, vals)
	}
	if ok, _ := cas("UPDATE lwt_static.t SET static_col = ? WHERE pk = ? AND ck = ? IF value = ?", 5, 1, 1, 2); !ok {
		t.Error("static update if value (true) did not apply")
	}
	if got, want := rows(), []string{"1 1 5 2", "1 3 5 4", "1 5 5 6", "1 7 5 8"}; !slices.Equal(got, want) {
		t.Errorf("after the static update: %v, want %v", got, want)
	}
	if ok, vals := cas("DELETE static_col FROM lwt_static.t WHERE pk = ? AND ck = ? IF value = ?", 1, 5, 10); ok ||
		!slices.Equal(vals, []any{6}) {
		t.Errorf("static delete if value (false): %v %v", ok, vals)
	}
	if ok, _ := cas("DELETE static_col FROM lwt_static.t WHERE pk = ? AND ck = ? IF value = ?", 1, 5, 6); !ok {
		t.Error("static delete if value (true) did not apply")
	}
	if got, want := rows(), []string{"1 1 null 2", "1 3 null 4", "1 5 null 6", "1 7 null 8"}; !slices.Equal(got, want) {
		t.Errorf("after the static delete: %v, want %v", got, want)
	}
}
