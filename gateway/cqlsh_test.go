package gateway_test

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
)

// cqlshReport is what testdata/python/cqlsh.py prints.
type cqlshReport struct {
	ProtocolVersion int                            `json:"protocol_version"`
	ReleaseVersion  string                         `json:"release_version"`
	CQLVersion      string                         `json:"cql_version"`
	Peers           int                            `json:"peers"`
	Keyspaces       []string                       `json:"keyspaces"`
	Tables          []string                       `json:"tables"`
	UserTypes       []string                       `json:"user_types"`
	Indexes         []string                       `json:"indexes"`
	Columns         map[string][]string            `json:"columns"`
	Export          string                         `json:"export"`
	TableExport     map[string]string              `json:"table_export"`
	Describe        map[string][]map[string]string `json:"describe"`
	DescribeError   string                         `json:"describe_error"`
	DescribeCluster struct {
		Cluster, Partitioner, Snitch string
		Ranges                       int
	} `json:"describe_cluster"`
	Warnings []string `json:"warnings"`
}

// runCqlsh runs cqlsh.py against the shared gateway; protocol is empty
// for the driver's own negotiation.
func runCqlsh(t *testing.T, keyspace, protocol string) cqlshReport {
	t.Helper()
	host, port, _ := net.SplitHostPort(gw.Addr().String())
	args := []string{host, port, keyspace}
	if protocol != "" {
		args = append(args, protocol)
	}
	var r cqlshReport
	runPython(t, &r, "testdata/python/cqlsh.py", args...)
	return r
}

// TestCqlsh connects as cqlsh 6 does, through the Python driver it embeds
// (cqlsh itself is not installable here), once with the driver's protocol
// negotiation and once with --protocol-version 4, builds the driver's
// schema metadata from system_schema, and checks the DESCRIBE statements
// cqlsh 6 sends to a Cassandra 4.x server and the driver's client-side
// export that older cqlsh versions print.
func TestCqlsh(t *testing.T) {
	if err := installPythonDriver(); err != nil {
		t.Fatal(err)
	}
	waitAlone(t)
	const ks = "cqlsh_ks"
	sess := session(t, "")
	exec(t, sess,
		"DROP KEYSPACE IF EXISTS "+ks,
		"CREATE KEYSPACE "+ks+" WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
		"CREATE TYPE "+ks+".address (street text, zip int)",
		"CREATE TABLE "+ks+`.readings (sensor text, at timestamp, value double, note text, home frozen<address>, tags set<text>,
			PRIMARY KEY (sensor, at)) WITH CLUSTERING ORDER BY (at DESC) AND comment = 'by sensor'`,
		"CREATE INDEX readings_note_idx ON "+ks+".readings (note)",
		"CREATE INDEX readings_value_sai ON "+ks+".readings (value) USING 'sai'",
		"CREATE TABLE "+ks+".kv (k int PRIMARY KEY, v text)",
		"CREATE MATERIALIZED VIEW "+ks+".kv_by_v AS SELECT * FROM "+ks+".kv WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k)",
		"CREATE TABLE "+ks+".emb (id int PRIMARY KEY, v vector<float, 3>)",
		"CREATE INDEX emb_v ON "+ks+".emb (v) USING 'sai'",
		"CREATE FUNCTION "+ks+".plus(s int, n int) CALLED ON NULL INPUT RETURNS int LANGUAGE java AS 'return s + n;'",
		"CREATE AGGREGATE "+ks+".total(int) SFUNC plus STYPE int INITCOND 0")

	keyspace := "CREATE KEYSPACE cqlsh_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '1'}  AND durable_writes = true;"
	address := "CREATE TYPE cqlsh_ks.address (\n    street text,\n    zip int\n);"
	readings := `CREATE TABLE cqlsh_ks.readings (
    sensor text,
    at timestamp,
    home frozen<address>,
    note text,
    value double,
    tags set<text>,
    PRIMARY KEY (sensor, at)
) WITH CLUSTERING ORDER BY (at DESC)
    AND ` + describeDefaults("by sensor")
	index := "CREATE INDEX readings_note_idx ON cqlsh_ks.readings (note);"
	sai := "CREATE CUSTOM INDEX readings_value_sai ON cqlsh_ks.readings (value) USING 'org.apache.cassandra.index.sai.StorageAttachedIndex';"
	kv := "CREATE TABLE cqlsh_ks.kv (\n    k int PRIMARY KEY,\n    v text\n) WITH " + describeDefaults("")
	view := "CREATE MATERIALIZED VIEW cqlsh_ks.kv_by_v AS\n    SELECT *\n    FROM cqlsh_ks.kv\n    WHERE v IS NOT NULL AND k IS NOT NULL\n" +
		"    PRIMARY KEY (v, k)\n WITH CLUSTERING ORDER BY (k ASC)\n    AND " +
		strings.Replace(describeDefaults(""), "    AND default_time_to_live = 0\n", "", 1)

	type row = map[string]string
	element := func(typ, name, create string) row {
		return row{"keyspace_name": ks, "type": typ, "name": name, "create_statement": create}
	}
	emb := "CREATE TABLE cqlsh_ks.emb (\n    id int PRIMARY KEY,\n    v vector<float, 3>\n) WITH " + describeDefaults("")
	embIndex := "CREATE CUSTOM INDEX emb_v ON cqlsh_ks.emb (v) USING 'org.apache.cassandra.index.sai.StorageAttachedIndex';"
	plus := "CREATE FUNCTION cqlsh_ks.plus(s int, n int)\n    CALLED ON NULL INPUT\n    RETURNS int\n    LANGUAGE java\n    AS $$return s + n;$$;"
	total := "CREATE AGGREGATE cqlsh_ks.total(int)\n    SFUNC plus\n    STYPE int\n    INITCOND 0;"
	want := map[string][]row{
		"DESCRIBE KEYSPACE cqlsh_ks": {element("keyspace", ks, keyspace), element("type", "address", address),
			element("function", "plus(int, int)", plus), element("aggregate", "total(int)", total),
			element("table", "emb", emb), element("index", "emb_v", embIndex), element("table", "kv", kv), element("materialized_view", "kv_by_v", view), element("table", "readings", readings),
			element("index", "readings_note_idx", index), element("index", "readings_value_sai", sai)},
		"DESCRIBE MATERIALIZED VIEW cqlsh_ks.kv_by_v": {element("materialized_view", "kv_by_v", view)},
		"DESCRIBE TABLE cqlsh_ks.readings": {element("table", "readings", readings), element("index", "readings_note_idx", index),
			element("index", "readings_value_sai", sai)},
		"DESCRIBE TYPE cqlsh_ks.address":            {element("type", "address", address)},
		"DESCRIBE INDEX cqlsh_ks.readings_note_idx": {element("index", "readings_note_idx", index)},
		"DESC ONLY KEYSPACE cqlsh_ks":               {element("keyspace", ks, keyspace)},
		"USE DESCRIBE TABLES": {{"keyspace_name": ks, "type": "table", "name": "emb"}, {"keyspace_name": ks, "type": "table", "name": "kv"},
			{"keyspace_name": ks, "type": "table", "name": "readings"}},
		"USE DESCRIBE FUNCTIONS":            {{"keyspace_name": ks, "type": "function", "name": "plus(int, int)"}},
		"DESCRIBE FUNCTION cqlsh_ks.plus":   {element("function", "plus(int, int)", plus)},
		"DESCRIBE AGGREGATE cqlsh_ks.total": {element("aggregate", "total(int)", total)},
		"USE DESCRIBE TYPES":                {{"keyspace_name": ks, "type": "type", "name": "address"}},
		"USE DESCRIBE readings": {element("table", "readings", readings), element("index", "readings_note_idx", index),
			element("index", "readings_value_sai", sai)},
	}

	for _, protocol := range []string{"", "4"} {
		t.Run("protocol="+cmp.Or(protocol, "negotiated"), func(t *testing.T) {
			r := runCqlsh(t, ks, protocol)
			wantVersion := 5
			if protocol == "4" {
				wantVersion = 4
			}
			if r.ProtocolVersion != wantVersion {
				t.Errorf("protocol version %d, want %d", r.ProtocolVersion, wantVersion)
			}
			for _, w := range r.Warnings {
				if !downgradeLog.MatchString(w) {
					t.Errorf("driver logged: %s", w)
				}
			}
			if !strings.HasPrefix(r.ReleaseVersion, "4.") || r.CQLVersion == "" || r.Peers != 0 {
				t.Errorf("system.local: release %q, cql %q; %d peers", r.ReleaseVersion, r.CQLVersion, r.Peers)
			}
			for _, k := range []string{ks, "system", "system_schema"} {
				if !slices.Contains(r.Keyspaces, k) {
					t.Errorf("metadata lacks keyspace %s: %q", k, r.Keyspaces)
				}
			}
			if !slices.Equal(r.Tables, []string{"emb", "kv", "readings"}) || !slices.Equal(r.UserTypes, []string{"address"}) ||
				!slices.Equal(r.Indexes, []string{"emb_v", "readings_note_idx", "readings_value_sai"}) {
				t.Errorf("metadata: tables %q, types %q, indexes %q", r.Tables, r.UserTypes, r.Indexes)
			}
			if got := strings.Join(r.Columns["readings"], " "); got != "sensor at home note tags value" {
				t.Errorf("columns of readings in metadata: %s", got)
			}

			for cql, rows := range want {
				if got := r.Describe[cql]; !slices.EqualFunc(got, rows, maps.Equal) {
					t.Errorf("%s:\n%s\nwant:\n%s", cql, describeDump(got), describeDump(rows))
				}
			}
			keyspaces := r.Describe["DESCRIBE KEYSPACES"]
			if !slices.ContainsFunc(keyspaces, func(m row) bool { return m["name"] == ks && m["type"] == "keyspace" }) ||
				!slices.ContainsFunc(keyspaces, func(m row) bool { return m["name"] == "system_schema" }) {
				t.Errorf("DESCRIBE KEYSPACES: %v", keyspaces)
			}
			if c := r.DescribeCluster; c.Cluster != "cqlpg" || c.Partitioner != "Murmur3Partitioner" || c.Snitch != "DynamicEndpointSnitch" || c.Ranges == 0 {
				t.Errorf("DESCRIBE CLUSTER: %+v", c)
			}
			if !strings.Contains(r.DescribeError, "Table 'nope' not found in keyspace 'cqlsh_ks'") {
				t.Errorf("DESCRIBE TABLE of a missing table: %q", r.DescribeError)
			}

			checkCqlshExport(t, r, keyspace, address+"\n\n"+plus+"\n\n"+total, index+"\n"+sai)
		})
	}
}

// describeDefaults are the table options DESCRIBE prints for a table
// created with none but its comment: Cassandra 4.1's defaults.
func describeDefaults(comment string) string {
	return `additional_write_policy = '99p'
    AND bloom_filter_fp_chance = 0.01
    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}
    AND cdc = false
    AND comment = '` + comment + `'
    AND compaction = {'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4'}
    AND compression = {'chunk_length_in_kb': '16', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}
    AND memtable = 'default'
    AND crc_check_chance = 1.0
    AND default_time_to_live = 0
    AND extensions = {}
    AND gc_grace_seconds = 864000
    AND max_index_interval = 2048
    AND memtable_flush_period_in_ms = 0
    AND min_index_interval = 128
    AND read_repair = 'BLOCKING'
    AND speculative_retry = '99p';`
}

// driverOptions are the table options the Python driver 3.25 prints on
// the client side: those it knows from system_schema.tables (not memtable
// nor extensions), by name.
func driverOptions(comment string) string {
	lines := strings.Split(describeDefaults(comment), "\n")
	return strings.Join(slices.DeleteFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "    AND memtable = ") || strings.HasPrefix(l, "    AND extensions = ")
	}), "\n")
}

// checkCqlshExport checks the driver's client-side CQL, which it builds
// from system_schema: the keyspace, type (with the functions and
// aggregates after it) and index statements are the server's; tables list the key columns and then the others by name, and
// only the options the driver knows.
func checkCqlshExport(t *testing.T, r cqlshReport, keyspace, address, index string) {
	t.Helper()
	kv := "CREATE TABLE cqlsh_ks.kv (\n    k int PRIMARY KEY,\n    v text\n) WITH " + driverOptions("")
	readings := `CREATE TABLE cqlsh_ks.readings (
    sensor text,
    at timestamp,
    home frozen<address>,
    note text,
    tags set<text>,
    value double,
    PRIMARY KEY (sensor, at)
) WITH CLUSTERING ORDER BY (at DESC)
    AND ` + driverOptions("by sensor")
	view := "CREATE MATERIALIZED VIEW cqlsh_ks.kv_by_v AS\n    SELECT *\n    FROM cqlsh_ks.kv\n    WHERE v IS NOT NULL AND k IS NOT NULL\n" +
		"    PRIMARY KEY (v, k)\n    WITH CLUSTERING ORDER BY (k ASC)\n    AND " + driverOptions("")
	// A vector column as system_schema types it: the driver, older than
	// the vector type, prints it as it reads it.
	emb := "CREATE TABLE cqlsh_ks.emb (\n    id int PRIMARY KEY,\n    v vector<float, 3>\n) WITH " + driverOptions("") +
		"\nCREATE CUSTOM INDEX emb_v ON cqlsh_ks.emb (v) USING 'org.apache.cassandra.index.sai.StorageAttachedIndex';"
	want := keyspace + "\n\n" + address + "\n\n" + emb + "\n\n" + kv + "\n\n" + view + "\n\n" + readings + "\n" + index
	if r.Export != want {
		t.Errorf("export_as_string:\n%s\nwant:\n%s", r.Export, want)
	}
	if got, want := r.TableExport["readings"], readings+"\n"+index; got != want {
		t.Errorf("table export_as_string:\n%s\nwant:\n%s", got, want)
	}
}

func describeDump(rows []map[string]string) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "  %s | %s | %s | %s\n", r["keyspace_name"], r["type"], r["name"], r["create_statement"])
	}
	return b.String()
}
