package gateway_test

import (
	"testing"
)

// TestPreparedAfterSchemaChange: a statement whose result columns a schema
// change reshapes is answered UNPREPARED, so the driver prepares it again
// and reads the new columns, instead of decoding rows by the old ones; a
// statement the change leaves in shape keeps running.
func TestPreparedAfterSchemaChange(t *testing.T) {
	sess := session(t, "")
	exec(t, sess, "CREATE KEYSPACE pi WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE pi.t (k int PRIMARY KEY, v int)",
		"INSERT INTO pi.t (k, v) VALUES (1, 10)")
	all := func() map[string]any {
		t.Helper()
		row := map[string]any{}
		if err := sess.Query("SELECT * FROM pi.t WHERE k = ?", 1).MapScan(row); err != nil {
			t.Fatal(err)
		}
		return row
	}
	var v int
	kv := func() int {
		t.Helper()
		if err := sess.Query("SELECT v FROM pi.t WHERE k = ?", 1).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if row := all(); len(row) != 2 || row["v"] != 10 {
		t.Fatalf("before ALTER: %v", row)
	}
	kv()
	exec(t, sess, "ALTER TABLE pi.t ADD w text", "UPDATE pi.t SET w = 'new' WHERE k = 1")
	if row := all(); len(row) != 3 || row["v"] != 10 || row["w"] != "new" {
		t.Errorf("SELECT * after ADD: %v", row)
	}
	if got := kv(); got != 10 {
		t.Errorf("SELECT v after ADD: %d", got)
	}
	exec(t, sess, "ALTER TABLE pi.t DROP w")
	if row := all(); len(row) != 2 || row["v"] != 10 {
		t.Errorf("SELECT * after DROP: %v", row)
	}
}
