package translate

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

func TestParseDescribe(t *testing.T) {
	tests := []struct {
		cql  string
		want DescribeStmt
	}{
		{"DESCRIBE SCHEMA", DescribeStmt{Kind: DescribeSchema}},
		{"desc full schema;", DescribeStmt{Kind: DescribeSchema, Full: true}},
		{"DESCRIBE KEYSPACES", DescribeStmt{Kind: DescribeKeyspaces}},
		{"DESCRIBE KEYSPACE", DescribeStmt{Kind: DescribeKeyspace}},
		{"DESCRIBE KEYSPACE ks", DescribeStmt{Kind: DescribeKeyspace, Keyspace: "ks"}},
		{`DESC ONLY KEYSPACE "Ks"`, DescribeStmt{Kind: DescribeKeyspace, Keyspace: "Ks", Only: true}},
		{"DESCRIBE ONLY KEYSPACE", DescribeStmt{Kind: DescribeKeyspace, Only: true}},
		{"DESCRIBE TABLES", DescribeStmt{Kind: DescribeTables}},
		{"DESCRIBE TABLE t", DescribeStmt{Kind: DescribeTable, Name: "t"}},
		{"describe columnfamily Ks.T", DescribeStmt{Kind: DescribeTable, Keyspace: "ks", Name: "t"}},
		{`DESCRIBE TABLE ks."T" WITH INTERNALS`, DescribeStmt{Kind: DescribeTable, Keyspace: "ks", Name: "T", Internals: true}},
		{"DESCRIBE TYPES", DescribeStmt{Kind: DescribeTypes}},
		{"DESCRIBE TYPE ks.address", DescribeStmt{Kind: DescribeType, Keyspace: "ks", Name: "address"}},
		{"DESCRIBE FUNCTIONS", DescribeStmt{Kind: DescribeFunctions}},
		{"DESCRIBE FUNCTION ks.f", DescribeStmt{Kind: DescribeFunction, Keyspace: "ks", Name: "f"}},
		{"DESCRIBE FUNCTION token", DescribeStmt{Kind: DescribeFunction, Name: "token"}},
		{"DESCRIBE AGGREGATES", DescribeStmt{Kind: DescribeAggregates}},
		{"DESCRIBE AGGREGATE avg", DescribeStmt{Kind: DescribeAggregate, Name: "avg"}},
		{"DESCRIBE INDEX ks.i", DescribeStmt{Kind: DescribeIndex, Keyspace: "ks", Name: "i"}},
		{"DESCRIBE MATERIALIZED VIEW v", DescribeStmt{Kind: DescribeView, Name: "v"}},
		{"DESCRIBE CLUSTER", DescribeStmt{Kind: DescribeCluster}},
		{"DESCRIBE ks", DescribeStmt{Kind: DescribeGeneric, Name: "ks"}},
		{"DESC ks.t WITH INTERNALS", DescribeStmt{Kind: DescribeGeneric, Keyspace: "ks", Name: "t", Internals: true}},
		// Unreserved keywords not followed by a name are names.
		{"DESCRIBE type", DescribeStmt{Kind: DescribeGeneric, Name: "type"}},
		{"DESCRIBE type.t", DescribeStmt{Kind: DescribeGeneric, Keyspace: "type", Name: "t"}},
		{"DESCRIBE only", DescribeStmt{Kind: DescribeGeneric, Name: "only"}},
		{"DESCRIBE map", DescribeStmt{Kind: DescribeGeneric, Name: "map"}},
	}
	for _, tc := range tests {
		t.Run(tc.cql, func(t *testing.T) {
			parsed, err := Parse(tc.cql)
			if err != nil {
				t.Fatal(err)
			}
			if got, ok := parsed.Statement.(*DescribeStmt); !ok || !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("got %+v, want %+v", parsed.Statement, tc.want)
			}
		})
	}
}

func TestParseDescribeErrors(t *testing.T) {
	tests := []struct{ cql, want string }{
		{"DESCRIBE", "line 1:8 no viable alternative at input '<EOF>'"},
		{"DESCRIBE TABLE", "line 1:14 no viable alternative at input '<EOF>'"},
		{"DESCRIBE FULL KEYSPACES", "line 1:14 mismatched input 'KEYSPACES' expecting K_SCHEMA"},
		{"DESCRIBE MATERIALIZED v", "line 1:22 mismatched input 'v' expecting K_VIEW"},
		{"DESCRIBE KEYSPACES ks", "line 1:19 no viable alternative at input 'ks'"},
		{"DESCRIBE TYPES.t", "line 1:14 no viable alternative at input '.'"},
		{"DESCRIBE select", "line 1:9 no viable alternative at input 'select'"},
		{"DESCRIBE TABLE t WITH", "line 1:21 mismatched input '<EOF>' expecting K_INTERNALS"},
	}
	for _, tc := range tests {
		t.Run(tc.cql, func(t *testing.T) {
			_, err := Parse(tc.cql)
			var syn *SyntaxError
			if !errors.As(err, &syn) || err.Error() != tc.want {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
}

// describeSchema is testSchema plus a type and an index.
func describeSchema() *pgschema.Schema {
	s := testSchema()
	ks := s.Keyspace("cycling")
	ks.Types["fullname"] = pgschema.NewUDT("cycling", "fullname", []string{"first", "last"},
		[]*pgschema.Type{pgschema.Scalar(pgschema.Text), pgschema.Scalar(pgschema.Text)}, false)
	ks.Tables["cyclist_name"].Indexes = []*pgschema.Index{{Name: "by_last", Kind: "COMPOSITES",
		Options: map[string]string{"target": "lastname"}}}
	return s
}

func prepareDescribe(ks, cql string) (*Describe, error) {
	parsed, err := Parse(cql)
	if err != nil {
		return nil, err
	}
	plan, err := Prepare(parsed, ks, describeSchema())
	if err != nil {
		return nil, err
	}
	return plan.(*Describe), nil
}

func TestPlanDescribe(t *testing.T) {
	tests := []struct {
		ks, cql string
		// kind, keyspace and name after resolution, the result columns,
		// and the rows' keyspace/type/name.
		want    string
		columns string
		rows    []string
	}{
		{"", "DESCRIBE KEYSPACES", "keyspaces", "keyspace_name type name", []string{
			"cycling keyspace cycling", "inventory keyspace inventory", "system keyspace system",
			"system_auth keyspace system_auth", "system_distributed keyspace system_distributed", "system_schema keyspace system_schema",
			"system_traces keyspace system_traces", "system_views keyspace system_views",
			"system_virtual_schema keyspace system_virtual_schema",
			"testks keyspace testks"}},
		{"", "DESCRIBE SCHEMA", "schema", "keyspace_name type name create_statement", []string{
			"cycling keyspace cycling", "cycling type fullname", "cycling table cyclist_category",
			"cycling table cyclist_name", "cycling index by_last", "cycling table rank_by_year_and_name",
			"inventory keyspace inventory", "testks keyspace testks", "testks table kv", "testks table odd",
			"testks table test"}},
		{"cycling", "DESCRIBE TABLES", "tables cycling", "keyspace_name type name", []string{
			"cycling table cyclist_category", "cycling table cyclist_name", "cycling table rank_by_year_and_name"}},
		{"", "DESCRIBE TYPES", "types", "keyspace_name type name", []string{"cycling type fullname"}},
		{"testks", "DESCRIBE FUNCTIONS", "functions testks", "keyspace_name type name", nil},
		{"testks", "DESCRIBE AGGREGATES", "aggregates testks", "keyspace_name type name", nil},
		{"cycling", "DESCRIBE KEYSPACE", "keyspace cycling", "keyspace_name type name create_statement", []string{
			"cycling keyspace cycling", "cycling type fullname", "cycling table cyclist_category",
			"cycling table cyclist_name", "cycling index by_last", "cycling table rank_by_year_and_name"}},
		{"", "DESCRIBE ONLY KEYSPACE testks", "keyspace testks", "keyspace_name type name create_statement",
			[]string{"testks keyspace testks"}},
		{"", "DESCRIBE cycling", "keyspace cycling", "keyspace_name type name create_statement", []string{
			"cycling keyspace cycling", "cycling type fullname", "cycling table cyclist_category",
			"cycling table cyclist_name", "cycling index by_last", "cycling table rank_by_year_and_name"}},
		{"cycling", "DESCRIBE cyclist_name", "table cycling cyclist_name", "keyspace_name type name create_statement",
			[]string{"cycling table cyclist_name", "cycling index by_last"}},
		{"", "DESCRIBE cycling.by_last", "index cycling by_last", "keyspace_name type name create_statement",
			[]string{"cycling index by_last"}},
		{"testks", "DESCRIBE TABLE odd", "table testks odd", "keyspace_name type name create_statement",
			[]string{"testks table odd"}},
		{"", "DESCRIBE TYPE cycling.fullname", "type cycling fullname", "keyspace_name type name create_statement",
			[]string{"cycling type fullname"}},
		{"", "DESCRIBE CLUSTER", "cluster", "cluster partitioner snitch", nil},
		{"system", "DESCRIBE CLUSTER", "cluster", "cluster partitioner snitch", nil},
		{"testks", "DESCRIBE CLUSTER", "cluster", "cluster partitioner snitch range_ownership", nil},
	}
	kinds := map[DescribeKind]string{DescribeSchema: "schema", DescribeKeyspaces: "keyspaces", DescribeKeyspace: "keyspace",
		DescribeTables: "tables", DescribeTable: "table", DescribeTypes: "types", DescribeType: "type",
		DescribeFunctions: "functions", DescribeAggregates: "aggregates", DescribeIndex: "index", DescribeCluster: "cluster"}
	for _, tc := range tests {
		t.Run(tc.ks+": "+tc.cql, func(t *testing.T) {
			d, err := prepareDescribe(tc.ks, tc.cql)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(strings.Fields(kinds[d.Kind]+" "+d.Keyspace+" "+d.Name), " "); got != tc.want {
				t.Errorf("resolved to %q, want %q", got, tc.want)
			}
			var cols []string
			for _, c := range d.Result {
				if c.Keyspace != "system" || c.Table != "describe" {
					t.Errorf("column %s in %s.%s", c.Name, c.Keyspace, c.Table)
				}
				cols = append(cols, c.Name)
			}
			if got := strings.Join(cols, " "); got != tc.columns {
				t.Errorf("columns %q, want %q", got, tc.columns)
			}
			if d.Kind == DescribeCluster {
				if d.RangeOwnership && d.Result[3].Type.String() != "map<text, frozen<list<text>>>" {
					t.Errorf("range_ownership type %s", d.Result[3].Type)
				}
				return
			}
			elems, err := d.Elements(describeSchema())
			if err != nil {
				t.Fatal(err)
			}
			var rows []string
			for _, e := range elems {
				rows = append(rows, e.Keyspace+" "+e.Type+" "+e.Name)
				if d.Kind.IsListing() != (e.Create == "") {
					t.Errorf("%s: create statement %q", e.Name, e.Create)
				}
			}
			if !reflect.DeepEqual(rows, tc.rows) {
				t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(tc.rows, "\n"))
			}
		})
	}
}

func TestPlanDescribeFull(t *testing.T) {
	d, err := prepareDescribe("", "DESCRIBE FULL SCHEMA")
	if err != nil {
		t.Fatal(err)
	}
	elems, err := d.Elements(describeSchema())
	if err != nil {
		t.Fatal(err)
	}
	var keyspaces []string
	for _, e := range elems {
		if e.Type == "keyspace" {
			keyspaces = append(keyspaces, e.Name)
		}
	}
	if got := strings.Join(keyspaces, " "); got != "cycling inventory system system_auth system_distributed system_schema system_traces system_views system_virtual_schema testks" {
		t.Errorf("keyspaces %s", got)
	}
}

func TestPlanDescribeErrors(t *testing.T) {
	tests := []struct{ ks, cql, want string }{
		{"", "DESCRIBE KEYSPACE", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE TABLE t", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE TYPE t", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE INDEX i", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE FUNCTION f", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE AGGREGATE a", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE MATERIALIZED VIEW v", "No keyspace specified and no current keyspace"},
		{"", "DESCRIBE KEYSPACE nope", "'nope' not found in keyspaces"},
		{"", "DESCRIBE nope", "'nope' not found in keyspaces"},
		{"", "DESCRIBE nope.t", "'nope' not found in keyspaces"},
		{"testks", "DESCRIBE nope", "'nope' not found in keyspace 'testks'"},
		{"", "DESCRIBE testks.nope", "'nope' not found in keyspace 'testks'"},
		{"", "DESCRIBE TABLE testks.nope", "Table 'nope' not found in keyspace 'testks'"},
		{"testks", "DESCRIBE TABLE \"KV\"", "Table 'KV' not found in keyspace 'testks'"},
		{"", "DESCRIBE INDEX testks.nope", "Table for existing index 'nope' not found in 'testks'"},
		{"", "DESCRIBE TYPE testks.nope", "User defined type 'nope' not found in 'testks'"},
		{"", "DESCRIBE FUNCTION testks.f", "User defined function 'f' not found in 'testks'"},
		{"", "DESCRIBE AGGREGATE testks.a", "User defined aggregate 'a' not found in 'testks'"},
		{"", "DESCRIBE MATERIALIZED VIEW testks.v", "Materialized view 'v' not found in 'testks'"},
		{"gone", "DESCRIBE TABLES", "'gone' not found in keyspaces"},
	}
	for _, tc := range tests {
		t.Run(tc.cql, func(t *testing.T) {
			_, err := prepareDescribe(tc.ks, tc.cql)
			var inv *InvalidError
			if !errors.As(err, &inv) || inv.Msg != tc.want {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
}

func TestTableOptionErrors(t *testing.T) {
	tests := []struct {
		cql    string
		syntax bool
		want   string
	}{
		{"CREATE TABLE t2 (k int PRIMARY KEY) WITH foo = 1", true, "Unknown property 'foo'"},
		{"CREATE TABLE t2 (k int PRIMARY KEY) WITH comment = 'a' AND comment = 'b'", true, "Multiple definitions for property 'comment'"},
		{"CREATE TABLE t2 (k int PRIMARY KEY) WITH gc_grace_seconds = 'soon'", true, "Invalid integer value soon for 'gc_grace_seconds'"},
		{"CREATE TABLE t2 (k int PRIMARY KEY) WITH caching = 'ALL'", true, "Invalid value for property 'caching'. It should be a map."},
		{"CREATE TABLE t2 (k int PRIMARY KEY) WITH compaction = {'class': 'X', 'class': 'Y'}", true, "Multiple definition for property class"},
		{"CREATE TABLE t2 (k int PRIMARY KEY) WITH gc_grace_seconds = -1", false, "gc_grace_seconds must be greater than or equal to 0 (got -1)"},
		{"CREATE TABLE t2 (k int PRIMARY KEY) WITH compaction = {'min_threshold': 2}", false, "Missing sub-option 'class' for the 'compaction' option"},
		{"ALTER TABLE kv WITH speculative_retry = 'often'", false, "Invalid value often for option 'speculative_retry'"},
	}
	for _, tc := range tests {
		t.Run(tc.cql, func(t *testing.T) {
			_, err := prepare("testks", tc.cql)
			var syn *SyntaxError
			var cfg *ConfigError
			switch {
			case tc.syntax && errors.As(err, &syn) && syn.Error() == tc.want:
			case !tc.syntax && errors.As(err, &cfg) && cfg.Msg == tc.want:
			default:
				t.Errorf("got %T %v, want %s", err, err, tc.want)
			}
		})
	}
}

func TestTableOptionsStored(t *testing.T) {
	plan, err := prepare("testks", `CREATE TABLE t2 (k int PRIMARY KEY) WITH comment = 'it''s'
		AND compaction = {'class': 'LeveledCompactionStrategy', 'sstable_size_in_mb': 160}
		AND default_time_to_live = '100' AND cdc = true AND speculative_retry = '99PERCENTILE'`)
	if err != nil {
		t.Fatal(err)
	}
	got := plan.(*SchemaChange).NewTable.Options
	want := map[string]string{
		"comment":              "'it''s'",
		"compaction":           "{'class': 'org.apache.cassandra.db.compaction.LeveledCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4', 'sstable_size_in_mb': '160'}",
		"default_time_to_live": "100",
		"cdc":                  "true",
		"speculative_retry":    "'99p'",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}
