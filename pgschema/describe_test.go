package pgschema_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// The expected texts below are Cassandra 4.1's DESCRIBE output: the
// layout of TableMetadata/TableParams/KeyspaceMetadata/UserType/
// IndexMetadata.toCqlString, as in Cassandra's DescribeStatementTest and
// cqlsh dtests (with 4.1's memtable option after compression).

// defaultOptions4_1 is what DESCRIBE prints for a table created without
// options.
const defaultOptions4_1 = `additional_write_policy = '99p'
    AND bloom_filter_fp_chance = 0.01
    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}
    AND cdc = false
    AND comment = ''
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

func descCol(name string, typ *pgschema.Type, kind pgschema.ColumnKind, pos int) *pgschema.Column {
	return &pgschema.Column{Name: name, Type: typ, Kind: kind, Position: pos}
}

var (
	descInt  = pgschema.Scalar(pgschema.Int)
	descText = pgschema.Scalar(pgschema.Text)
)

func descRegular(name string, typ *pgschema.Type) *pgschema.Column {
	return descCol(name, typ, pgschema.Regular, -1)
}

func describedUsers() *pgschema.Table {
	return pgschema.NewTable("test", "users", [16]byte{}, []*pgschema.Column{
		descRegular("lastname", descText), descRegular("firstname", descText), descRegular("age", descInt),
		descCol("userid", descText, pgschema.PartitionKey, 0),
	}, nil)
}

func TestDescribeTable(t *testing.T) {
	mustType := func(s string) *pgschema.Type {
		typ, err := pgschema.ParseType(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return typ
	}
	desc := descCol("ck2", descInt, pgschema.Clustering, 1)
	desc.Desc = true
	tests := []struct {
		name  string
		table *pgschema.Table
		want  string
	}{
		{"single-column key inline", describedUsers(), `CREATE TABLE test.users (
    userid text PRIMARY KEY,
    age int,
    firstname text,
    lastname text
) WITH ` + defaultOptions4_1},
		{"quoted name and clustering order", pgschema.NewTable("test", "Test", [16]byte{}, []*pgschema.Column{
			descCol("id", descInt, pgschema.PartitionKey, 0), descCol("col", descInt, pgschema.Clustering, 0), descRegular("val", descText),
		}, nil), `CREATE TABLE test."Test" (
    id int,
    col int,
    val text,
    PRIMARY KEY (id, col)
) WITH CLUSTERING ORDER BY (col ASC)
    AND ` + defaultOptions4_1},
		{"composite key, multi-cell columns last", pgschema.NewTable("ks", "t", [16]byte{}, []*pgschema.Column{
			descRegular("reg1", descInt), descRegular("reg2", mustType("list<int>")), descRegular("reg3", descInt),
			descCol("pk2", descInt, pgschema.PartitionKey, 1), descCol("pk1", descInt, pgschema.PartitionKey, 0),
			descCol("ck1", descInt, pgschema.Clustering, 0), desc,
		}, nil), `CREATE TABLE ks.t (
    pk1 int,
    pk2 int,
    ck1 int,
    ck2 int,
    reg1 int,
    reg3 int,
    reg2 list<int>,
    PRIMARY KEY ((pk1, pk2), ck1, ck2)
) WITH CLUSTERING ORDER BY (ck1 ASC, ck2 DESC)
    AND ` + defaultOptions4_1},
		{"static columns before regular ones", pgschema.NewTable("ks", "t", [16]byte{}, []*pgschema.Column{
			descCol("pk1", descText, pgschema.PartitionKey, 0), descCol("pk2", descInt, pgschema.PartitionKey, 1),
			descCol("c", descInt, pgschema.Clustering, 0), descCol("s", mustType("decimal"), pgschema.Static, -1),
			descRegular("v1", descText), descRegular("v2", descInt), descRegular("v3", descInt),
		}, nil), `CREATE TABLE ks.t (
    pk1 text,
    pk2 int,
    c int,
    s decimal static,
    v1 text,
    v2 int,
    v3 int,
    PRIMARY KEY ((pk1, pk2), c)
) WITH CLUSTERING ORDER BY (c ASC)
    AND ` + defaultOptions4_1},
		{"every type", pgschema.NewTable("test", "has_all_types", [16]byte{}, []*pgschema.Column{
			descCol("num", descInt, pgschema.PartitionKey, 0),
			descRegular("asciicol", mustType("ascii")), descRegular("bigintcol", mustType("bigint")),
			descRegular("blobcol", mustType("blob")), descRegular("booleancol", mustType("boolean")),
			descRegular("decimalcol", mustType("decimal")), descRegular("doublecol", mustType("double")),
			descRegular("durationcol", mustType("duration")), descRegular("floatcol", mustType("float")),
			descRegular("frozenlistcol", mustType("frozen<list<text>>")),
			descRegular("frozenmapcol", mustType("frozen<map<timestamp, timeuuid>>")),
			descRegular("frozensetcol", mustType("frozen<set<bigint>>")), descRegular("intcol", descInt),
			descRegular("smallintcol", mustType("smallint")), descRegular("textcol", descText),
			descRegular("timestampcol", mustType("timestamp")), descRegular("tinyintcol", mustType("tinyint")),
			descRegular("tuplecol", mustType("frozen<tuple<text, int, frozen<tuple<timestamp>>>>")),
			descRegular("uuidcol", mustType("uuid")), descRegular("varcharcol", mustType("varchar")),
			descRegular("varintcol", mustType("varint")), descRegular("listcol", mustType("list<decimal>")),
			descRegular("mapcol", mustType("map<timestamp, timeuuid>")), descRegular("setcol", mustType("set<tinyint>")),
		}, nil), `CREATE TABLE test.has_all_types (
    num int PRIMARY KEY,
    asciicol ascii,
    bigintcol bigint,
    blobcol blob,
    booleancol boolean,
    decimalcol decimal,
    doublecol double,
    durationcol duration,
    floatcol float,
    frozenlistcol frozen<list<text>>,
    frozenmapcol frozen<map<timestamp, timeuuid>>,
    frozensetcol frozen<set<bigint>>,
    intcol int,
    smallintcol smallint,
    textcol text,
    timestampcol timestamp,
    tinyintcol tinyint,
    tuplecol frozen<tuple<text, int, frozen<tuple<timestamp>>>>,
    uuidcol uuid,
    varcharcol text,
    varintcol varint,
    listcol list<decimal>,
    mapcol map<timestamp, timeuuid>,
    setcol set<tinyint>
) WITH ` + defaultOptions4_1},
		{"options given", pgschema.NewTable("ks", "opts", [16]byte{}, []*pgschema.Column{
			descCol("key", descInt, pgschema.PartitionKey, 0), descRegular("desc", descText),
		}, map[string]string{
			"comment":              "'it''s'",
			"compaction":           "{'class': 'org.apache.cassandra.db.compaction.LeveledCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4', 'sstable_size_in_mb': '160'}",
			"default_time_to_live": "3600",
			"gc_grace_seconds":     "0",
			"caching":              "{'keys': 'NONE', 'rows_per_partition': '10'}",
			"speculative_retry":    "'MIN(99p,50ms)'",
			"read_repair":          "'NONE'",
			"cdc":                  "true",
			"crc_check_chance":     "0.5",
			"compression":          "{'enabled': 'false'}",
		}), `CREATE TABLE ks.opts (
    key int PRIMARY KEY,
    "desc" text
) WITH additional_write_policy = '99p'
    AND bloom_filter_fp_chance = 0.1
    AND caching = {'keys': 'NONE', 'rows_per_partition': '10'}
    AND cdc = true
    AND comment = 'it''s'
    AND compaction = {'class': 'org.apache.cassandra.db.compaction.LeveledCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4', 'sstable_size_in_mb': '160'}
    AND compression = {'enabled': 'false'}
    AND memtable = 'default'
    AND crc_check_chance = 0.5
    AND default_time_to_live = 3600
    AND extensions = {}
    AND gc_grace_seconds = 0
    AND max_index_interval = 2048
    AND memtable_flush_period_in_ms = 0
    AND min_index_interval = 128
    AND read_repair = 'NONE'
    AND speculative_retry = 'MIN(99p,50ms)';`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.table.CreateStatement(); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestDescribeTableWithInternals(t *testing.T) {
	table := pgschema.NewTable("ks", "t", [16]byte{0x5a, 0x1c, 0x39, 0x5e, 0xb4, 0x1f, 0x11, 0xe5, 0x9f, 0x3d, 0x51, 0x97, 0x5b, 0x28, 0x3c, 0x4e},
		[]*pgschema.Column{descCol("pk", descText, pgschema.PartitionKey, 0), descRegular("v1", descText), descRegular("v2", descInt)}, nil)
	table.Dropped = []pgschema.DroppedColumn{{Name: "v3", Type: "int", Kind: "regular", Dropped: time.UnixMicro(1589286942065000)}}
	want := `CREATE TABLE ks.t (
    pk text PRIMARY KEY,
    v1 text,
    v2 int,
    v3 int
) WITH ID = 5a1c395e-b41f-11e5-9f3d-51975b283c4e
    AND ` + defaultOptions4_1 + `
ALTER TABLE ks.t DROP v3 USING TIMESTAMP 1589286942065000;`
	if got := table.Describe(true); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := table.Describe(false); strings.Contains(got, "v3") || strings.Contains(got, "ID =") {
		t.Errorf("without internals: %s", got)
	}
}

func TestDescribeKeyspace(t *testing.T) {
	simple := &pgschema.Keyspace{Name: "test", DurableWrites: true,
		Replication: sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: 1}}
	nts := &pgschema.Keyspace{Name: "Geo", DurableWrites: false,
		Replication: sharding.Replication{Class: sharding.NetworkTopologyStrategyClass, DCFactors: map[string]int{"dc2": 1, "dc1": 3}}}
	tests := []struct {
		k    *pgschema.Keyspace
		want string
	}{
		{simple, "CREATE KEYSPACE test WITH replication = {'class': 'SimpleStrategy', 'replication_factor': '1'}  AND durable_writes = true;"},
		{nts, `CREATE KEYSPACE "Geo" WITH replication = {'class': 'NetworkTopologyStrategy', 'dc1': '3', 'dc2': '1'}  AND durable_writes = false;`},
		{pgschema.NewSchema([16]byte{}, nil).Keyspace("system"), "CREATE KEYSPACE system WITH replication = {'class': 'LocalStrategy'}  AND durable_writes = true;"},
		{pgschema.NewSchema([16]byte{}, nil).Keyspace("system_virtual_schema"), `/*
Warning: Keyspace system_virtual_schema is a virtual keyspace and cannot be recreated with CQL.
Structure, for reference:
VIRTUAL KEYSPACE system_virtual_schema;
*/`},
	}
	for _, tc := range tests {
		if got := tc.k.CreateStatement(); got != tc.want {
			t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
		}
	}
}

func TestDescribeVirtualTable(t *testing.T) {
	table := pgschema.NewSchema([16]byte{}, nil).Table("system_virtual_schema", "columns")
	want := `/*
Warning: Table system_virtual_schema.columns is a virtual table and cannot be recreated with CQL.
Structure, for reference:
VIRTUAL TABLE system_virtual_schema.columns (
    keyspace_name text,
    table_name text,
    column_name text,
    clustering_order text,
    column_name_bytes blob,
    kind text,
    position int,
    type text,
    PRIMARY KEY (keyspace_name, table_name, column_name)
) WITH CLUSTERING ORDER BY (table_name ASC, column_name ASC)
    AND comment = 'virtual column definitions';
*/`
	if got := table.CreateStatement(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// describedTypes has three types where the first by name uses the last,
// which uses the second: DESCRIBE KEYSPACE lists each after what it uses.
func describedTypes(t *testing.T) *pgschema.Keyspace {
	k := &pgschema.Keyspace{Name: "ks", DurableWrites: true, Types: map[string]*pgschema.Type{},
		Tables: map[string]*pgschema.Table{}, Replication: sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: 1}}
	t2 := pgschema.NewUDT("ks", "type_02", []string{"x", "y"}, []*pgschema.Type{descText, descText}, false)
	t3 := pgschema.NewUDT("ks", "type_03", []string{"a", "b"}, []*pgschema.Type{descText, t2.Freeze()}, false)
	t1 := pgschema.NewUDT("ks", "type_01", []string{"a", "b", "token", "s"},
		[]*pgschema.Type{descInt, t3.Freeze(), descText, pgschema.NewSet(descText, false)}, false)
	k.Types["type_01"], k.Types["type_02"], k.Types["type_03"] = t1, t2, t3
	return k
}

func TestDescribeTypes(t *testing.T) {
	k := describedTypes(t)
	want := []string{
		"CREATE TYPE ks.type_02 (\n    x text,\n    y text\n);",
		"CREATE TYPE ks.type_03 (\n    a text,\n    b frozen<type_02>\n);",
		"CREATE TYPE ks.type_01 (\n    a int,\n    b frozen<type_03>,\n    \"token\" text,\n    s set<text>\n);",
	}
	var got []string
	for _, typ := range k.SortedTypes() {
		got = append(got, typ.CreateStatement())
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestDescribeIndex(t *testing.T) {
	table := describedUsers()
	tests := []struct {
		idx  *pgschema.Index
		want string
	}{
		{&pgschema.Index{Name: "myindex", Kind: "COMPOSITES", Options: map[string]string{"target": "age"}},
			"CREATE INDEX myindex ON test.users (age);"},
		{&pgschema.Index{Name: "QuotedNameIndex", Kind: "COMPOSITES", Options: map[string]string{"target": "firstname"}},
			`CREATE INDEX "QuotedNameIndex" ON test.users (firstname);`},
		{&pgschema.Index{Name: "m_idx", Kind: "COMPOSITES", Options: map[string]string{"target": "keys(m)"}},
			"CREATE INDEX m_idx ON test.users (keys(m));"},
		{&pgschema.Index{Name: "users_value_idx", Kind: "CUSTOM", Options: map[string]string{"target": "lastname",
			"class_name": "org.apache.cassandra.index.sasi.SASIIndex"}},
			"CREATE CUSTOM INDEX users_value_idx ON test.users (lastname) USING 'org.apache.cassandra.index.sasi.SASIIndex';"},
		{&pgschema.Index{Name: "users_value_idx_1", Kind: "CUSTOM", Options: map[string]string{"target": "lastname",
			"class_name": "org.apache.cassandra.index.sasi.SASIIndex", "is_literal": "false", "mode": "CONTAINS"}},
			"CREATE CUSTOM INDEX users_value_idx_1 ON test.users (lastname) USING 'org.apache.cassandra.index.sasi.SASIIndex' WITH OPTIONS = {'is_literal': 'false', 'mode': 'CONTAINS'};"},
	}
	for _, tc := range tests {
		if got := tc.idx.CreateStatement(table); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}

func TestKeyspaceElements(t *testing.T) {
	k := describedTypes(t)
	users := describedUsers()
	users.Keyspace = "ks"
	users.Indexes = []*pgschema.Index{
		{Name: "myindex", Kind: "COMPOSITES", Options: map[string]string{"target": "age"}},
		{Name: "QuotedNameIndex", Kind: "COMPOSITES", Options: map[string]string{"target": "firstname"}},
	}
	other := pgschema.NewTable("ks", "Test", [16]byte{}, []*pgschema.Column{descCol("k", descInt, pgschema.PartitionKey, 0)}, nil)
	first := pgschema.NewTable("ks", "has_all_types", [16]byte{}, []*pgschema.Column{descCol("k", descInt, pgschema.PartitionKey, 0)}, nil)
	k.Tables["users"], k.Tables["Test"], k.Tables["has_all_types"] = users, other, first
	var got []string
	for _, e := range pgschema.KeyspaceElements(k, false, false) {
		got = append(got, e.Keyspace+" "+e.Type+" "+e.Name)
	}
	want := []string{
		"ks keyspace ks", "ks type type_02", "ks type type_03", "ks type type_01",
		"ks table has_all_types", `ks table "Test"`, "ks table users",
		"ks index myindex", `ks index "QuotedNameIndex"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if only := pgschema.KeyspaceElements(k, true, false); len(only) != 1 || only[0].Type != "keyspace" {
		t.Errorf("ONLY: %v", only)
	}
}
