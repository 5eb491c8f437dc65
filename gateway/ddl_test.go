package gateway_test

import (
	"context"
	"slices"
	"testing"

	"github.com/cqlpg/cqlpg/gateway/repair"
	"github.com/jackc/pgx/v5"
)

// pgQuery runs SQL on the first shard and returns the first column of
// every row as text.
func pgQuery(t *testing.T, sql string, args ...any) []string {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), shardURLs[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func TestAlterTable(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE alter_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE alter_ks.t (k int, c int, v int, PRIMARY KEY (k, c))",
		"INSERT INTO alter_ks.t (k, c, v) VALUES (1, 1, 1)",
		"ALTER TABLE alter_ks.t ADD w text",
		"ALTER TABLE alter_ks.t ADD (x int, y int)",
		"ALTER TABLE alter_ks.t ADD IF NOT EXISTS w text",
		"UPDATE alter_ks.t SET w = 'new', x = 5 WHERE k = 1 AND c = 1")
	var w string
	var x int
	if err := sess.Query("SELECT w, x FROM alter_ks.t WHERE k = 1 AND c = 1").Scan(&w, &x); err != nil || w != "new" || x != 5 {
		t.Fatalf("added columns: %q %d %v", w, x, err)
	}
	exec(t, sess, "ALTER TABLE alter_ks.t DROP y", "ALTER TABLE alter_ks.t DROP IF EXISTS nope",
		"ALTER TABLE alter_ks.t RENAME c TO cc", "ALTER TABLE alter_ks.t WITH comment = 'renamed' AND default_time_to_live = 100")
	if got := ints(t, sess, "SELECT cc FROM alter_ks.t WHERE k = 1"); !slices.Equal(got, []int{1}) {
		t.Errorf("renamed column: %v", got)
	}
	cols := pgQuery(t, `SELECT column_name FROM information_schema.columns WHERE table_schema = 'alter_ks'
		AND table_name = 't' AND column_name NOT LIKE '%$%' AND column_name NOT LIKE '\_%' ORDER BY ordinal_position`)
	if want := []string{"k", "cc", "v", "w", "x"}; !slices.Equal(cols, want) {
		t.Errorf("Postgres columns %v, want %v", cols, want)
	}
	var comment string
	if err := sess.Query("SELECT comment FROM system_schema.tables WHERE keyspace_name = 'alter_ks' AND table_name = 't'").Scan(&comment); err != nil || comment != "renamed" {
		t.Errorf("comment after ALTER WITH: %q %v", comment, err)
	}
	for _, tc := range []struct{ query, msg string }{
		{"ALTER TABLE alter_ks.t ADD v int", "Column with name 'v' already exists"},
		{"ALTER TABLE alter_ks.t DROP k", "Cannot drop PRIMARY KEY column k"},
		{"ALTER TABLE alter_ks.t DROP nope", "Column nope was not found in table 'alter_ks.t'"},
		{"ALTER TABLE alter_ks.t RENAME v TO vv", "Cannot rename non PRIMARY KEY column v"},
		{"ALTER TABLE alter_ks.t ADD y text", "Cannot re-add previously dropped column 'y' of type text, incompatible with previous type int"},
		{"ALTER TABLE alter_ks.nope ADD y text", "Table 'alter_ks.nope' doesn't exist"},
		{"ALTER TABLE alter_ks.t ALTER v TYPE text", "Altering column types is no longer supported"},
	} {
		requireCQLError(t, sess.Query(tc.query).Exec(), 0x2200, tc.msg)
	}
	exec(t, sess, "ALTER TABLE IF EXISTS alter_ks.nope ADD y text", "TRUNCATE alter_ks.t")
	if got := ints(t, sess, "SELECT cc FROM alter_ks.t WHERE k = 1"); len(got) != 0 {
		t.Errorf("rows after TRUNCATE: %v", got)
	}
}

func TestIndexesAndTypes(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"CREATE KEYSPACE objs WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TABLE objs.t (k int PRIMARY KEY, v int, w text)",
		"CREATE INDEX ON objs.t (v)",
		"CREATE INDEX IF NOT EXISTS w_idx ON objs.t (w)",
		"CREATE TYPE objs.address (street text, zip int)",
		"ALTER TYPE objs.address ADD city text",
		"ALTER TYPE objs.address RENAME zip TO postcode")
	idx := pgQuery(t, `SELECT indexname FROM pg_indexes WHERE schemaname = 'objs' AND indexname NOT LIKE '%$%' ORDER BY 1`)
	if want := []string{"t_v_idx", "w_idx"}; !slices.Equal(idx, want) {
		t.Errorf("Postgres indexes %v, want %v", idx, want)
	}
	var built []string
	iter := sess.Query(`SELECT index_name FROM system."IndexInfo" WHERE table_name = 'objs'`).Iter()
	for name := ""; iter.Scan(&name); {
		built = append(built, name)
	}
	if err := iter.Close(); err != nil || !slices.Equal(built, []string{"t_v_idx", "w_idx"}) {
		t.Errorf(`system."IndexInfo" lists %v (%v)`, built, err)
	}
	var kind string
	var options map[string]string
	if err := sess.Query("SELECT kind, options FROM system_schema.indexes WHERE keyspace_name = 'objs' AND table_name = 't' AND index_name = 'w_idx'").
		Scan(&kind, &options); err != nil || kind != "COMPOSITES" || options["target"] != "w" {
		t.Errorf("system_schema.indexes: %s %v %v", kind, options, err)
	}
	var names, types []string
	if err := sess.Query("SELECT field_names, field_types FROM system_schema.types WHERE keyspace_name = 'objs' AND type_name = 'address'").
		Scan(&names, &types); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"street", "postcode", "city"}) || !slices.Equal(types, []string{"text", "int", "text"}) {
		t.Errorf("type after ALTER: %v %v", names, types)
	}
	for _, tc := range []struct{ query, msg string }{
		{"CREATE INDEX t_v_idx ON objs.t (w)", "Index 't_v_idx' already exists"},
		{"CREATE INDEX other ON objs.t (v)", "Index other is a duplicate of existing index t_v_idx"},
		{"CREATE INDEX ON objs.t (k)", "Cannot create secondary index on the only partition key column k"},
		{"CREATE INDEX ON objs.t (nope)", "Column 'nope' doesn't exist"},
		{"ALTER TABLE objs.t DROP v", "Cannot drop column v because it has dependent secondary indexes (t_v_idx)"},
		{"DROP INDEX objs.nope", "Index 'objs.nope' doesn't exist'"},
		{"CREATE TYPE objs.address (a int)", "A user type with name 'address' already exists"},
		{"ALTER TYPE objs.address ADD city int", "Cannot add field city to type objs.address: a field with name city already exists"},
		{"ALTER TYPE objs.nope ADD a int", "Type objs.nope doesn't exist"},
		{"DROP TYPE objs.nope", "Type 'objs.nope' doesn't exist"},
	} {
		requireCQLError(t, sess.Query(tc.query).Exec(), 0x2200, tc.msg)
	}
	exec(t, sess, "DROP INDEX objs.t_v_idx", "ALTER TABLE objs.t DROP v", "DROP TYPE objs.address", "DROP INDEX IF EXISTS objs.t_v_idx")
	if idx := pgQuery(t, `SELECT indexname FROM pg_indexes WHERE schemaname = 'objs' AND indexname = 't_v_idx'`); len(idx) != 0 {
		t.Errorf("index still in Postgres after DROP INDEX")
	}
	var dropped string
	if err := sess.Query("SELECT type FROM system_schema.dropped_columns WHERE keyspace_name = 'objs' AND table_name = 't' AND column_name = 'v'").
		Scan(&dropped); err != nil || dropped != "int" {
		t.Errorf("system_schema.dropped_columns: %q %v", dropped, err)
	}
}

// TestRenamePartitionKey: a partition key column renamed keeps working
// everywhere it is stored: the table, its static row and its deletions
// records, which partition deletions write and repair reads.
func TestRenamePartitionKey(t *testing.T) {
	sess := sessionAll(t, "")
	exec(t, sess,
		"DROP KEYSPACE IF EXISTS rename_ks",
		"CREATE KEYSPACE rename_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2}",
		"CREATE TABLE rename_ks.t (k int, c int, s int static, v int, PRIMARY KEY (k, c))",
		"INSERT INTO rename_ks.t (k, c, s, v) VALUES (1, 1, 1, 1) USING TIMESTAMP 10",
		"ALTER TABLE rename_ks.t RENAME k TO id",
		"DELETE FROM rename_ks.t USING TIMESTAMP 20 WHERE id = 1",
		// Older than the deletion: shadowed by its record.
		"INSERT INTO rename_ks.t (id, c, v) VALUES (1, 2, 2) USING TIMESTAMP 15",
		"INSERT INTO rename_ks.t (id, c, s, v) VALUES (2, 1, 3, 3)")
	wantRows(t, sess.Query("SELECT id, c, s, v FROM rename_ks.t WHERE id IN (1, 2)"), "", "2 | 1 | 3 | 3")
	// The replicas were written at ALL: the repair reads every range of
	// the table, deletions records included, and finds them agreeing.
	res, err := gw.Repair(context.Background(), repair.Options{Keyspace: "rename_ks"})
	if err != nil || res.Tables != 1 || res.Ranges == 0 || res.RangesRepaired != 0 {
		t.Errorf("repair after the rename: %+v, %v; want the one table's ranges, all agreeing", res, err)
	}
}
