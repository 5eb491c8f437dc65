package gateway_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gocql/gocql"
)

// describeRows runs a DESCRIBE through gocql, as cqlsh sends it, and
// returns its rows joined with " | ", checking that the columns are those
// of system.describe.
func describeRows(t *testing.T, sess *gocql.Session, cql string, columns ...string) []string {
	t.Helper()
	iter := sess.Query(cql).Iter()
	var names []string
	for _, c := range iter.Columns() {
		if c.Keyspace != "system" || c.Table != "describe" || c.TypeInfo.Type() != gocql.TypeVarchar {
			t.Errorf("%s: column %s.%s.%s of type %s", cql, c.Keyspace, c.Table, c.Name, c.TypeInfo)
		}
		names = append(names, c.Name)
	}
	var rows []string
	for {
		row := map[string]any{}
		if !iter.MapScan(row) {
			break
		}
		var vals []string
		for _, n := range names {
			vals = append(vals, row[n].(string))
		}
		rows = append(rows, strings.Join(vals, " | "))
	}
	if err := iter.Close(); err != nil {
		t.Fatalf("%s: %v", cql, err)
	}
	if got := strings.Join(names, " "); got != strings.Join(columns, " ") {
		t.Errorf("%s: columns %s", cql, got)
	}
	return rows
}

// describeOptions are the options DESCRIBE prints for the test's table:
// Cassandra 4.1's defaults except those its CREATE TABLE gives.
const describeOptions = `additional_write_policy = '99p'
    AND bloom_filter_fp_chance = 0.1
    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}
    AND cdc = false
    AND comment = 'people''s places'
    AND compaction = {'class': 'org.apache.cassandra.db.compaction.LeveledCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4'}
    AND compression = {'chunk_length_in_kb': '16', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}
    AND memtable = 'default'
    AND crc_check_chance = 1.0
    AND default_time_to_live = 3600
    AND extensions = {}
    AND gc_grace_seconds = 864000
    AND max_index_interval = 2048
    AND memtable_flush_period_in_ms = 0
    AND min_index_interval = 128
    AND read_repair = 'BLOCKING'
    AND speculative_retry = '99p';`

func TestDescribe(t *testing.T) {
	sess := session(t, "")
	exec(t, sess,
		"DROP KEYSPACE IF EXISTS describe_ks",
		"CREATE KEYSPACE describe_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TYPE describe_ks.address (street text, zip int)",
		`CREATE TABLE describe_ks.places (id int, name text, "Kind" text, born date,
			PRIMARY KEY (id, name)) WITH CLUSTERING ORDER BY (name DESC) AND comment = 'people''s places'
			AND default_time_to_live = 3600 AND compaction = {'class': 'LeveledCompactionStrategy'}`,
		"CREATE TABLE describe_ks.kv (k text PRIMARY KEY, v int)",
		"CREATE INDEX kv_v_idx ON describe_ks.kv (v)")

	places := `CREATE TABLE describe_ks.places (
    id int,
    name text,
    "Kind" text,
    born date,
    PRIMARY KEY (id, name)
) WITH CLUSTERING ORDER BY (name DESC)
    AND ` + describeOptions
	keyspace := "CREATE KEYSPACE describe_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '1'}  AND durable_writes = true;"
	address := "CREATE TYPE describe_ks.address (\n    street text,\n    zip int\n);"
	index := "CREATE INDEX kv_v_idx ON describe_ks.kv (v);"

	got := describeRows(t, sess, "DESCRIBE TABLE describe_ks.places", "keyspace_name", "type", "name", "create_statement")
	if len(got) != 1 || got[0] != "describe_ks | table | places | "+places {
		t.Errorf("DESCRIBE TABLE:\n%s\nwant:\n%s", strings.Join(got, "\n"), places)
	}

	want := []string{
		"describe_ks | keyspace | describe_ks | " + keyspace,
		"describe_ks | type | address | " + address,
		"describe_ks | table | kv | ",
		"describe_ks | index | kv_v_idx | " + index,
		"describe_ks | table | places | " + places,
	}
	for _, cql := range []string{"DESCRIBE KEYSPACE describe_ks", "DESC describe_ks"} {
		got := describeRows(t, sess, cql, "keyspace_name", "type", "name", "create_statement")
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows:\n%s", cql, len(got), strings.Join(got, "\n"))
		}
		for i := range want {
			if !strings.HasPrefix(got[i], want[i]) || i != 2 && got[i] != want[i] {
				t.Errorf("%s row %d:\n%s\nwant:\n%s", cql, i, got[i], want[i])
			}
		}
	}

	if got := describeRows(t, sess, "DESCRIBE ONLY KEYSPACE describe_ks", "keyspace_name", "type", "name", "create_statement"); len(got) != 1 || got[0] != want[0] {
		t.Errorf("ONLY KEYSPACE: %q", got)
	}
	if got := describeRows(t, sess, "DESCRIBE INDEX describe_ks.kv_v_idx", "keyspace_name", "type", "name", "create_statement"); len(got) != 1 || got[0] != want[3] {
		t.Errorf("INDEX: %q", got)
	}
	if got := describeRows(t, sess, "DESCRIBE TYPE describe_ks.address", "keyspace_name", "type", "name", "create_statement"); len(got) != 1 || got[0] != want[1] {
		t.Errorf("TYPE: %q", got)
	}

	keyspaces := describeRows(t, sess, "DESCRIBE KEYSPACES", "keyspace_name", "type", "name")
	if !describeHasRow(keyspaces, "describe_ks | keyspace | describe_ks") || !describeHasRow(keyspaces, "system | keyspace | system") {
		t.Errorf("KEYSPACES: %q", keyspaces)
	}
	schema := describeRows(t, sess, "DESCRIBE SCHEMA", "keyspace_name", "type", "name", "create_statement")
	if !describeHasRow(schema, want[0]) || describeHasRow(schema, "system | keyspace | system | CREATE KEYSPACE system WITH replication = {'class': 'LocalStrategy'}  AND durable_writes = true;") {
		t.Errorf("SCHEMA has no describe_ks or has system")
	}
	full := describeRows(t, sess, "DESCRIBE FULL SCHEMA", "keyspace_name", "type", "name", "create_statement")
	if !describeHasRow(full, "system | keyspace | system | CREATE KEYSPACE system WITH replication = {'class': 'LocalStrategy'}  AND durable_writes = true;") {
		t.Errorf("FULL SCHEMA has no system keyspace")
	}

	// In a keyspace: listings cover it alone, and bare names are its.
	ks := session(t, "describe_ks")
	if got := describeRows(t, ks, "DESCRIBE TABLES", "keyspace_name", "type", "name"); strings.Join(got, ",") !=
		"describe_ks | table | kv,describe_ks | table | places" {
		t.Errorf("TABLES: %q", got)
	}
	if got := describeRows(t, ks, "DESCRIBE TYPES", "keyspace_name", "type", "name"); strings.Join(got, ",") != "describe_ks | type | address" {
		t.Errorf("TYPES: %q", got)
	}
	if got := describeRows(t, ks, "DESCRIBE FUNCTIONS", "keyspace_name", "type", "name"); len(got) != 0 {
		t.Errorf("FUNCTIONS: %q", got)
	}
	if got := describeRows(t, ks, "DESCRIBE places", "keyspace_name", "type", "name", "create_statement"); len(got) != 1 || got[0] != want[4] {
		t.Errorf("DESCRIBE places: %q", got)
	}
	if got := describeRows(t, ks, "DESCRIBE kv", "keyspace_name", "type", "name", "create_statement"); len(got) != 2 || got[1] != want[3] {
		t.Errorf("DESCRIBE kv: %q", got)
	}

	// ALTER TABLE WITH shows in DESCRIBE and system_schema.tables.
	exec(t, ks, "ALTER TABLE kv WITH gc_grace_seconds = 0 AND caching = {'keys': 'NONE'}")
	got = describeRows(t, ks, "DESCRIBE TABLE kv", "keyspace_name", "type", "name", "create_statement")
	if len(got) != 2 || !strings.Contains(got[0], "\n    AND caching = {'keys': 'NONE', 'rows_per_partition': 'NONE'}\n") ||
		!strings.Contains(got[0], "\n    AND gc_grace_seconds = 0\n") {
		t.Errorf("after ALTER: %q", got)
	}
	var (
		caching, compaction map[string]string
		ttl, gcGrace        int
		bloom               float64
		comment, retry      string
	)
	if err := sess.Query(`SELECT caching, compaction, default_time_to_live, gc_grace_seconds, bloom_filter_fp_chance,
		comment, speculative_retry FROM system_schema.tables WHERE keyspace_name = 'describe_ks' AND table_name = 'places'`).
		Scan(&caching, &compaction, &ttl, &gcGrace, &bloom, &comment, &retry); err != nil {
		t.Fatal(err)
	}
	if caching["keys"] != "ALL" || compaction["class"] != "org.apache.cassandra.db.compaction.LeveledCompactionStrategy" ||
		compaction["min_threshold"] != "4" || ttl != 3600 || gcGrace != 864000 || bloom != 0.1 || comment != "people's places" || retry != "99p" {
		t.Errorf("system_schema.tables: %v %v %d %d %v %q %q", caching, compaction, ttl, gcGrace, bloom, comment, retry)
	}
}

func describeHasRow(rows []string, row string) bool {
	for _, r := range rows {
		if r == row {
			return true
		}
	}
	return false
}

func TestDescribeCluster(t *testing.T) {
	waitAlone(t)
	sess := session(t, "")
	var cluster, partitioner, snitch string
	if err := sess.Query("DESCRIBE CLUSTER").Scan(&cluster, &partitioner, &snitch); err != nil {
		t.Fatal(err)
	}
	if cluster != "cqlpg" || partitioner != "Murmur3Partitioner" || snitch != "DynamicEndpointSnitch" {
		t.Errorf("cluster %q %q %q", cluster, partitioner, snitch)
	}

	exec(t, sess, "CREATE KEYSPACE IF NOT EXISTS describe_cluster WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}")
	ks := session(t, "describe_cluster")
	var ranges map[string][]string
	if err := ks.Query("DESCRIBE CLUSTER").Scan(&cluster, &partitioner, &snitch, &ranges); err != nil {
		t.Fatal(err)
	}
	var tokens []string
	if err := sess.Query("SELECT tokens FROM system.local WHERE key = 'local'").Scan(&tokens); err != nil {
		t.Fatal(err)
	}
	if len(ranges) == 0 || len(ranges) != len(tokens) {
		t.Fatalf("range_ownership has %d ranges for %d tokens", len(ranges), len(tokens))
	}
	for _, tok := range tokens {
		if eps := ranges[tok]; len(eps) != 1 || eps[0] != "/127.0.0.1:7000" {
			t.Errorf("range ending at %s: %q", tok, eps)
		}
	}
}

func TestDescribeErrors(t *testing.T) {
	sess := session(t, "")
	tests := []struct{ cql, want string }{
		{"DESCRIBE nope_ks", "'nope_ks' not found in keyspaces"},
		{"DESCRIBE TABLE nope", "No keyspace specified and no current keyspace"},
		{"DESCRIBE TABLE system.nope", "Table 'nope' not found in keyspace 'system'"},
		{"DESCRIBE system.nope", "'nope' not found in keyspace 'system'"},
		{"DESCRIBE TYPE system.nope", "User defined type 'nope' not found in 'system'"},
		{"DESCRIBE FUNCTION system.f", "User defined function 'f' not found in 'system'"},
	}
	for _, tc := range tests {
		err := sess.Query(tc.cql).Exec()
		var reqErr gocql.RequestError
		if !errors.As(err, &reqErr) || reqErr.Code() != gocql.ErrCodeInvalid || reqErr.Message() != tc.want {
			t.Errorf("%s: got %v, want Invalid %q", tc.cql, err, tc.want)
		}
	}
	// Options are checked with Cassandra's texts and error codes.
	for _, tc := range []struct {
		cql  string
		code int
		want string
	}{
		{"CREATE TABLE system_schema.x (k int PRIMARY KEY)", gocql.ErrCodeUnauthorized, ""},
		{"CREATE KEYSPACE IF NOT EXISTS describe_opts WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}", 0, ""},
		{"CREATE TABLE describe_opts.t (k int PRIMARY KEY) WITH read_repair_chance = 0.1", gocql.ErrCodeSyntax, "Unknown property 'read_repair_chance'"},
		{"CREATE TABLE describe_opts.t (k int PRIMARY KEY) WITH gc_grace_seconds = 'x'", gocql.ErrCodeSyntax, "Invalid integer value x for 'gc_grace_seconds'"},
		{"CREATE TABLE describe_opts.t (k int PRIMARY KEY) WITH bloom_filter_fp_chance = 2", gocql.ErrCodeConfig,
			"bloom_filter_fp_chance must be larger than 6.71E-5 and less than or equal to 1.0 (got 2.0)"},
	} {
		err := sess.Query(tc.cql).Exec()
		if tc.code == 0 {
			if err != nil {
				t.Fatalf("%s: %v", tc.cql, err)
			}
			continue
		}
		var reqErr gocql.RequestError
		if !errors.As(err, &reqErr) || reqErr.Code() != tc.code || tc.want != "" && reqErr.Message() != tc.want {
			t.Errorf("%s: got %v, want %x %q", tc.cql, err, tc.code, tc.want)
		}
	}
}
