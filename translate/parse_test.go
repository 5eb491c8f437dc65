package translate

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
)

// seedStatements are the CQL statements of the seed documents
// (../shared/seeds), copied here so that the tests need nothing outside
// the repository. The Java and Go programs' strings are written out as the
// statements they send.
var seedStatements = []string{
	// 000: primary, partition and clustering keys.
	`CREATE KEYSPACE IF NOT EXISTS cycling WITH replication = {'class':'SimpleStrategy', 'replication_factor' : 1};`,
	`USE cycling;`,
	`CREATE TABLE cyclist_name ( id UUID PRIMARY KEY, lastname text, firstname text );`,
	`CREATE TABLE cyclist_name ( id UUID, lastname text, firstname text, PRIMARY KEY (id) );`,
	`INSERT INTO cyclist_name (id, lastname, firstname) VALUES (41d01b63-244e-435d-bd6d-5dc8a0addb8c, 'A', 'J');`,
	`SELECT token(id), id, lastname, firstname FROM cyclist_name;`,
	`CREATE TABLE rank_by_year_and_name (
race_year int,
race_name text,
cyclist_name text,
rank int,
PRIMARY KEY ((race_year, race_name), rank)
);`,
	`INSERT INTO rank_by_year_and_name (race_year, race_name, cyclist_name, rank) VALUES (2000, '1', 'A', 1);`,
	`SELECT token(race_year, race_name), race_year, race_name, cyclist_name, rank from rank_by_year_and_name;`,
	`CREATE TABLE cyclist_category (
category text,
points int,
id UUID,
lastname text,
PRIMARY KEY (category, points)
) WITH CLUSTERING ORDER BY (points DESC);`,
	`INSERT INTO cyclist_category (category, points, id, lastname) VALUES ('best', 1, 41d01b63-244e-435d-bd6d-5dc8a0addb8c, 'J');`,
	`SELECT token(category), category, points, id, lastname from cyclist_category;`,
	` SELECT token(points), category, points, id, lastname from cyclist_category;`,
	// 001: keyspaces and tables.
	`-- Production Keyspace
CREATE KEYSPACE ecommerce WITH replication = {
  'class': 'NetworkTopologyStrategy',
  'us-east': 3,
  'eu-west': 3
};`,
	`-- Development Keyspace
CREATE KEYSPACE dev_test WITH replication = {
  'class': 'SimpleStrategy',
  'replication_factor': 1
};`,
	`CREATE TABLE sensor_data (
  sensor_id uuid,
  timestamp timestamp,
  temperature double,
  PRIMARY KEY ((sensor_id), timestamp)
) WITH CLUSTERING ORDER BY (timestamp DESC);`,
	"CREATE KEYSPACE IF NOT EXISTS inventory " +
		"WITH replication = {'class': 'NetworkTopologyStrategy', 'us-east': 3}",
	"CREATE TABLE IF NOT EXISTS inventory.stock (" +
		"product_id uuid, " +
		"warehouse_id uuid, " +
		"quantity int, " +
		"last_updated timestamp, " +
		"PRIMARY KEY ((product_id), warehouse_id))",
	`
        CREATE KEYSPACE IF NOT EXISTS inventory
        WITH replication = {'class': 'NetworkTopologyStrategy', 'us-east': 3}
    `,
	`
        CREATE TABLE IF NOT EXISTS inventory.stock (
            product_id uuid,
            warehouse_id uuid,
            quantity int,
            last_updated timestamp,
            PRIMARY KEY ((product_id), warehouse_id)
        )
    `,
	// 004: IN and range queries.
	`CREATE KEYSPACE testks WITH replication = {'class': 'SimpleStrategy', 'replication_factor':3};`,
	`CREATE TABLE testks.test (pk1 int,
pk2 int,
ck1 int,
ck2 int,
data int,
PRIMARY KEY ((pk1, pk2),ck1,ck2));`,
	`INSERT INTO testks.test (pk1, pk2, ck1, ck2, data) VALUES ( 1,1,1,1,4);`,
	`INSERT INTO testks.test (pk1, pk2, ck1, ck2, data) VALUES ( 1,1,1,2,5);`,
	`INSERT INTO testks.test (pk1, pk2, ck1, ck2, data) VALUES ( 1,2,1,1,5);`,
	`INSERT INTO testks.test (pk1, pk2, ck1, ck2, data) VALUES ( 1,2,1,2,6);`,
	`INSERT INTO testks.test (pk1, pk2, ck1, ck2, data) VALUES ( 1,2,1,3,7);`,
	`INSERT INTO testks.test (pk1, pk2, ck1, ck2, data) VALUES ( 1,2,1,4,8);`,
	`SELECT * FROM testks.test ;`,
	`SELECT * FROM testks.test WHERE pk1 = 1 and pk2 = 1 ;`,
	`SELECT * FROM testks.test WHERE pk1 = 1 and pk2 = 1 and ck1 = 1 and ck2 = 1;`,
	`SELECT * FROM testks.test WHERE pk1 = 1 and pk2 = 2 and ck1 = 1 and ck2 IN ( 1, 2, 3 ) ;`,
	`SELECT * FROM testks.test WHERE pk1 = 1 and pk2 = 2 and ck1 = 1 and ck2 >= 2 and ck2 < 100 ;`,
	`SELECT * FROM testks.test WHERE pk1 = 1 and pk2 IN ( 1, 2 ) and ck1 = 1 and ck2 >= 2 ;`,
	`SELECT * FROM testks.test WHERE pk1 = 1 and pk2 IN ( 1, 2 ) ;`,
	`SELECT * FROM testks.test WHERE pk1 = 1 and pk2 IN ( 1, 2 ) and ck1 = 1 and ck2 IN ( 1, 2 ) ;`,
}

func TestParseSeeds(t *testing.T) {
	for _, cql := range seedStatements {
		parsed, err := Parse(cql)
		if err != nil {
			t.Errorf("Parse(%q): %v", cql, err)
			continue
		}
		if len(parsed.MarkerNames) != 0 {
			t.Errorf("Parse(%q): %d markers in a statement without any", cql, len(parsed.MarkerNames))
		}
	}
}

// zeroPos clears every Pos in an AST so that trees compare by content.
func zeroPos(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			zeroPos(v.Elem())
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			zeroPos(v.Index(i))
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(Pos{}) {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				zeroPos(v.Field(i))
			}
		}
	}
}

// dump renders a value with its types, for failure messages.
func dump(v any) string { return fmt.Sprintf("%#v", v) }

// Shorthands for expected trees.
func lit(kind LiteralKind, text string) *Literal { return &Literal{Kind: kind, Text: text} }
func str(s string) *Literal                      { return lit(LitString, s) }
func num(s string) *Literal                      { return lit(LitInteger, s) }
func marker(i int) *Marker                       { return &Marker{Index: i} }
func col(name string) *ColumnSelector            { return &ColumnSelector{Name: name} }
func eq(c string, v Term) Relation {
	return Relation{Kind: ColumnRelation, Columns: []string{c}, Op: OpEQ, Value: v}
}
func rel(c string, op Operator, v Term) Relation {
	return Relation{Kind: ColumnRelation, Columns: []string{c}, Op: op, Value: v}
}
func in(c string, vs ...Term) Relation {
	return Relation{Kind: ColumnRelation, Columns: []string{c}, Op: OpIN, Values: vs}
}

const seedUUID = "41d01b63-244e-435d-bd6d-5dc8a0addb8c"

func TestParseStatements(t *testing.T) {
	intType, textType := pgschema.Scalar(pgschema.Int), pgschema.Scalar(pgschema.Text)
	tests := []struct {
		name    string
		cql     string
		want    Statement
		markers []string
	}{
		{
			name: "select star",
			cql:  "SELECT * FROM testks.test",
			want: &SelectStmt{Table: TableName{Keyspace: "testks", Name: "test"}},
		},
		{
			name: "select columns, aliases and functions",
			cql: `select id AS "Id", token(id), writetime(lastname) as wt, TTL(firstname), count(*),
				CAST(points AS text), "Quoted" FROM cyclist_name`,
			want: &SelectStmt{Table: TableName{Name: "cyclist_name"}, Selectors: []Selector{
				{Expr: col("id"), Alias: "Id"},
				{Expr: &CallSelector{Name: "token", Args: []SelectorExpr{col("id")}}},
				{Expr: &CallSelector{Name: "writetime", Args: []SelectorExpr{col("lastname")}}, Alias: "wt"},
				{Expr: &CallSelector{Name: "ttl", Args: []SelectorExpr{col("firstname")}}},
				{Expr: &CallSelector{Name: "count", Star: true}},
				{Expr: &CastSelector{Expr: col("points"), Type: textType}},
				{Expr: col("Quoted")},
			}},
		},
		{
			name: "select token of two columns, element, field and slice selectors",
			cql:  "SELECT token(a, b), m['k'], u.f, s[1..3], l[..2], 5 FROM t",
			want: &SelectStmt{Table: TableName{Name: "t"}, Selectors: []Selector{
				{Expr: &CallSelector{Name: "token", Args: []SelectorExpr{col("a"), col("b")}}},
				{Expr: &ElementSelector{Expr: col("m"), Key: str("k")}},
				{Expr: &FieldSelector{Expr: col("u"), Field: "f"}},
				{Expr: &ElementSelector{Expr: col("s"), Slice: true, From: num("1"), To: num("3")}},
				{Expr: &ElementSelector{Expr: col("l"), Slice: true, To: num("2")}},
				{Expr: &TermSelector{Term: num("5")}},
			}},
		},
		{
			name: "select json distinct",
			cql:  "SELECT JSON DISTINCT k FROM t",
			want: &SelectStmt{Table: TableName{Name: "t"}, JSON: true, Distinct: true,
				Selectors: []Selector{{Expr: col("k")}}},
		},
		{
			name: "json and distinct as column names",
			cql:  "SELECT json, distinct FROM t",
			want: &SelectStmt{Table: TableName{Name: "t"}, Selectors: []Selector{{Expr: col("json")}, {Expr: col("distinct")}}},
		},
		{
			name: "where with every relation form",
			cql: `SELECT * FROM t WHERE a = 1 AND b IN (1, 2) AND c IN ? AND d > 1 AND d <= ? AND e >= -3.5 AND f < 0x01
				AND token(a, b) > ? AND (c, d) > (1, 2) AND (c, d) IN ((1, 2), ?) AND (c, d) = ?
				AND l CONTAINS 'x' AND m CONTAINS KEY 'k' AND m['k'] = 'v' AND g != 1 AND h LIKE 'a%' AND i IS NOT NULL`,
			want: &SelectStmt{Table: TableName{Name: "t"}, Where: []Relation{
				eq("a", num("1")),
				in("b", num("1"), num("2")),
				{Kind: ColumnRelation, Columns: []string{"c"}, Op: OpIN, Value: marker(0)},
				rel("d", OpGT, num("1")),
				rel("d", OpLTE, marker(1)),
				rel("e", OpGTE, lit(LitFloat, "-3.5")),
				rel("f", OpLT, lit(LitHex, "0x01")),
				{Kind: TokenRelation, Columns: []string{"a", "b"}, Op: OpGT, Value: marker(2)},
				{Kind: TupleRelation, Columns: []string{"c", "d"}, Op: OpGT, Value: &Tuple{Elems: []Term{num("1"), num("2")}}},
				{Kind: TupleRelation, Columns: []string{"c", "d"}, Op: OpIN, Values: []Term{&Tuple{Elems: []Term{num("1"), num("2")}}, marker(3)}},
				{Kind: TupleRelation, Columns: []string{"c", "d"}, Op: OpEQ, Value: marker(4)},
				rel("l", OpContains, str("x")),
				rel("m", OpContainsKey, str("k")),
				{Kind: ColumnRelation, Columns: []string{"m"}, Key: str("k"), Op: OpEQ, Value: str("v")},
				rel("g", OpNEQ, num("1")),
				rel("h", OpLike, str("a%")),
				{Kind: ColumnRelation, Columns: []string{"i"}, Op: OpIsNotNull},
			}},
			markers: []string{"", "", "", "", ""},
		},
		{
			name: "named markers",
			cql:  `SELECT * FROM t WHERE k = :Key AND c IN :cs AND d = :"Mixed" LIMIT :lim`,
			want: &SelectStmt{Table: TableName{Name: "t"}, Where: []Relation{
				eq("k", &Marker{Index: 0, Name: "key"}),
				{Kind: ColumnRelation, Columns: []string{"c"}, Op: OpIN, Value: &Marker{Index: 1, Name: "cs"}},
				eq("d", &Marker{Index: 2, Name: "Mixed"}),
			}, Limit: &Marker{Index: 3, Name: "lim"}},
			markers: []string{"key", "cs", "Mixed", "lim"},
		},
		{
			name: "group by, order by, per partition limit, limit, allow filtering",
			cql:  "SELECT * FROM t WHERE k = 1 GROUP BY k, c ORDER BY c DESC, d ASC, e PER PARTITION LIMIT 2 LIMIT ? ALLOW FILTERING",
			want: &SelectStmt{Table: TableName{Name: "t"}, Where: []Relation{eq("k", num("1"))},
				GroupBy:           []string{"k", "c"},
				OrderBy:           []Ordering{{Column: "c", Desc: true}, {Column: "d"}, {Column: "e"}},
				PerPartitionLimit: num("2"), Limit: marker(0), AllowFiltering: true},
			markers: []string{""},
		},
		{
			name: "constants of every kind",
			cql: `INSERT INTO t (a, b, c, d, e, f, g, h, i, j, k, l, m, n, o) VALUES ('s', $$d'q$$, 1, -2.5e3, TRUE, false,
				null, 41d01b63-244e-435d-bd6d-5dc8a0addb8c, 0xff, 1h30m, PT2H, NaN, -Infinity, Infinity, -NaN)`,
			want: &InsertStmt{Table: TableName{Name: "t"},
				Columns: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o"},
				Values: []Term{str("s"), str("d'q"), num("1"), lit(LitFloat, "-2.5e3"), lit(LitBoolean, "TRUE"),
					lit(LitBoolean, "false"), lit(LitNull, "null"), lit(LitUUID, seedUUID), lit(LitHex, "0xff"),
					lit(LitDuration, "1h30m"), lit(LitDuration, "PT2H"), lit(LitFloat, "NaN"),
					lit(LitFloat, "-Infinity"), lit(LitFloat, "Infinity"), lit(LitFloat, "-NaN")}},
		},
		{
			name: "collection, tuple, user type, function and cast terms",
			cql: `INSERT INTO t (a, b, c, d, e, f, g, h) VALUES ([1, 2], {'x', 'y'}, {'k': 1, 'l': ?}, {}, (1, 'a'),
				{street: 'Main', "Nr": 5}, now(), (int) ?)`,
			want: &InsertStmt{Table: TableName{Name: "t"}, Columns: []string{"a", "b", "c", "d", "e", "f", "g", "h"},
				Values: []Term{
					&Collection{Kind: ListLiteral, Elems: []Term{num("1"), num("2")}},
					&Collection{Kind: SetLiteral, Elems: []Term{str("x"), str("y")}},
					&Collection{Kind: MapLiteral, Elems: []Term{str("k"), str("l")}, Values: []Term{num("1"), marker(0)}},
					&Collection{Kind: SetLiteral},
					&Tuple{Elems: []Term{num("1"), str("a")}},
					&UDTLiteral{Fields: []string{"street", "Nr"}, Values: []Term{str("Main"), num("5")}},
					&FunctionCall{Name: "now"},
					&TypeHint{Type: intType, Term: marker(1)},
				}},
			markers: []string{"", ""},
		},
		{
			name: "a colon right before a word in a map or user type literal is not a named marker",
			cql:  `INSERT INTO t (m, u, n) VALUES ({'a':true, 'b':null,'c':NaN}, {flag:false, "F":x.y(1)}, {1::v})`,
			want: &InsertStmt{Table: TableName{Name: "t"}, Columns: []string{"m", "u", "n"},
				Values: []Term{
					&Collection{Kind: MapLiteral, Elems: []Term{str("a"), str("b"), str("c")},
						Values: []Term{lit(LitBoolean, "true"), lit(LitNull, "null"), lit(LitFloat, "NaN")}},
					&UDTLiteral{Fields: []string{"flag", "F"},
						Values: []Term{lit(LitBoolean, "false"), &FunctionCall{Name: "x.y", Args: []Term{num("1")}}}},
					&Collection{Kind: MapLiteral, Elems: []Term{num("1")}, Values: []Term{&Marker{Index: 0, Name: "v"}}},
				}},
			markers: []string{"v"},
		},
		{
			name: "insert json, if not exists, using ttl and timestamp",
			cql:  `INSERT INTO ks.t JSON '{"k": 1}' DEFAULT UNSET IF NOT EXISTS USING TTL 86400 AND TIMESTAMP ?`,
			want: &InsertStmt{Table: TableName{Keyspace: "ks", Name: "t"}, JSON: str(`{"k": 1}`), DefaultUnset: true,
				IfNotExists: true, Using: Using{TTL: num("86400"), Timestamp: marker(0)}},
			markers: []string{""},
		},
		{
			name: "update with every assignment form and conditions",
			cql: `UPDATE ks.t USING TIMESTAMP 5 AND TTL ? SET a = 1, b = b + 2, c = c - {'x'}, l = [0] + l, m['k'] = 'v',
				u.f = 3, d += 1, e -= 2 WHERE k = ? AND c IN (1, 2) IF a = 1 AND m['k'] != 'w' AND b IN (1, ?)`,
			want: &UpdateStmt{Table: TableName{Keyspace: "ks", Name: "t"},
				Using: Using{Timestamp: num("5"), TTL: marker(0)},
				Assignments: []Assignment{
					{Column: "a", Op: AssignSet, Value: num("1")},
					{Column: "b", Op: AssignAdd, Value: num("2")},
					{Column: "c", Op: AssignSub, Value: &Collection{Kind: SetLiteral, Elems: []Term{str("x")}}},
					{Column: "l", Op: AssignPrepend, Value: &Collection{Kind: ListLiteral, Elems: []Term{num("0")}}},
					{Column: "m", Key: str("k"), Op: AssignSet, Value: str("v")},
					{Column: "u", Field: "f", Op: AssignSet, Value: num("3")},
					{Column: "d", Op: AssignAdd, Value: num("1")},
					{Column: "e", Op: AssignSub, Value: num("2")},
				},
				Where: []Relation{eq("k", marker(1)), in("c", num("1"), num("2"))},
				Conditions: []Condition{
					{Column: "a", Op: OpEQ, Value: num("1")},
					{Column: "m", Key: str("k"), Op: OpNEQ, Value: str("w")},
					{Column: "b", Op: OpIN, Values: []Term{num("1"), marker(2)}},
				}},
			markers: []string{"", "", ""},
		},
		{
			name: "update if exists",
			cql:  "UPDATE t SET a = 1 WHERE k = 1 IF EXISTS",
			want: &UpdateStmt{Table: TableName{Name: "t"}, Assignments: []Assignment{{Column: "a", Value: num("1")}},
				Where: []Relation{eq("k", num("1"))}, IfExists: true},
		},
		{
			name: "delete columns, elements and fields with timestamp and condition",
			cql:  "DELETE a, m['k'], u.f FROM t USING TIMESTAMP 10 WHERE k = 1 AND c > 2 IF a IN ?",
			want: &DeleteStmt{Table: TableName{Name: "t"},
				Columns:    []Deletion{{Column: "a"}, {Column: "m", Key: str("k")}, {Column: "u", Field: "f"}},
				Using:      Using{Timestamp: num("10")},
				Where:      []Relation{eq("k", num("1")), rel("c", OpGT, num("2"))},
				Conditions: []Condition{{Column: "a", Op: OpIN, Value: marker(0)}}},
			markers: []string{""},
		},
		{
			name: "delete rows if exists",
			cql:  "DELETE FROM ks.t WHERE k IN (1, 2) IF EXISTS",
			want: &DeleteStmt{Table: TableName{Keyspace: "ks", Name: "t"},
				Where: []Relation{in("k", num("1"), num("2"))}, IfExists: true},
		},
		{
			name: "batch numbers markers across its statements",
			cql: `BEGIN UNLOGGED BATCH USING TIMESTAMP ?
				INSERT INTO t (k, v) VALUES (?, ?);
				UPDATE t USING TTL ? SET v = ? WHERE k = :k
				DELETE FROM t WHERE k IN ?;
				APPLY BATCH;`,
			want: &BatchStmt{Kind: UnloggedBatch, Using: Using{Timestamp: marker(0)}, Statements: []Statement{
				&InsertStmt{Table: TableName{Name: "t"}, Columns: []string{"k", "v"}, Values: []Term{marker(1), marker(2)}},
				&UpdateStmt{Table: TableName{Name: "t"}, Using: Using{TTL: marker(3)},
					Assignments: []Assignment{{Column: "v", Value: marker(4)}},
					Where:       []Relation{eq("k", &Marker{Index: 5, Name: "k"})}},
				&DeleteStmt{Table: TableName{Name: "t"},
					Where: []Relation{{Kind: ColumnRelation, Columns: []string{"k"}, Op: OpIN, Value: marker(6)}}},
			}},
			markers: []string{"", "", "", "", "", "k", ""},
		},
		{
			name: "counter batch",
			cql:  "BEGIN COUNTER BATCH UPDATE t SET c = c + 1 WHERE k = 1; APPLY BATCH",
			want: &BatchStmt{Kind: CounterBatch, Statements: []Statement{
				&UpdateStmt{Table: TableName{Name: "t"}, Assignments: []Assignment{{Column: "c", Op: AssignAdd, Value: num("1")}},
					Where: []Relation{eq("k", num("1"))}},
			}},
		},
		{
			name: "use",
			cql:  `USE "MyKs"`,
			want: &UseStmt{Keyspace: "MyKs"},
		},
		{
			name: "create keyspace",
			cql:  "CREATE SCHEMA IF NOT EXISTS ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 2} AND durable_writes = false",
			want: &CreateKeyspaceStmt{Name: "ks", IfNotExists: true, Properties: []Property{
				{Name: "replication", Value: &Collection{Kind: MapLiteral, Elems: []Term{str("class"), str("replication_factor")},
					Values: []Term{str("SimpleStrategy"), num("2")}}},
				{Name: "durable_writes", Value: lit(LitBoolean, "false")},
			}},
		},
		{
			name: "create table with composite key, clustering order and options",
			cql: `CREATE TABLE IF NOT EXISTS ks.t (a int, b text, c timeuuid, d frozen<list<int>>, "S" int static,
				m map<text, frozen<set<int>>>, tu tuple<int, text>, PRIMARY KEY ((a, b), c, "S"),)
				WITH CLUSTERING ORDER BY (c DESC, "S" ASC) AND comment = 'it''s' AND compaction = {'class': 'X'}
				AND gc_grace_seconds = 10`,
			want: &CreateTableStmt{Table: TableName{Keyspace: "ks", Name: "t"}, IfNotExists: true,
				Columns: []ColumnDef{
					{Name: "a", Type: intType},
					{Name: "b", Type: textType},
					{Name: "c", Type: pgschema.Scalar(pgschema.Timeuuid)},
					{Name: "d", Type: pgschema.NewList(intType, true)},
					{Name: "S", Type: intType, Static: true},
					{Name: "m", Type: pgschema.NewMap(textType, pgschema.NewSet(intType, true), false)},
					{Name: "tu", Type: pgschema.NewTuple(intType, textType)},
				},
				PartitionKey:    []string{"a", "b"},
				Clustering:      []string{"c", "S"},
				ClusteringOrder: []Ordering{{Column: "c", Desc: true}, {Column: "S"}},
				Properties: []Property{
					{Name: "comment", Value: str("it's")},
					{Name: "compaction", Value: &Collection{Kind: MapLiteral, Elems: []Term{str("class")}, Values: []Term{str("X")}}},
					{Name: "gc_grace_seconds", Value: num("10")},
				}},
		},
		{
			name: "clustering order after other options",
			cql:  "CREATE TABLE t (k int, c int, PRIMARY KEY (k, c)) WITH comment = 'x' AND CLUSTERING ORDER BY (c DESC) AND COMPACT STORAGE",
			want: &CreateTableStmt{Table: TableName{Name: "t"},
				Columns:         []ColumnDef{{Name: "k", Type: intType}, {Name: "c", Type: intType}},
				PartitionKey:    []string{"k"},
				Clustering:      []string{"c"},
				ClusteringOrder: []Ordering{{Column: "c", Desc: true}},
				CompactStorage:  true,
				Properties:      []Property{{Name: "comment", Value: str("x")}}},
		},
		{
			name: "create columnfamily with inline primary key",
			cql:  "CREATE COLUMNFAMILY t (k varchar PRIMARY KEY, v int)",
			want: &CreateTableStmt{Table: TableName{Name: "t"},
				Columns:      []ColumnDef{{Name: "k", Type: textType}, {Name: "v", Type: intType}},
				PartitionKey: []string{"k"}},
		},
		{
			name: "drop keyspace",
			cql:  "DROP KEYSPACE IF EXISTS ks",
			want: &DropStmt{Kind: DropKeyspace, Keyspace: "ks", IfExists: true},
		},
		{
			name: "drop table",
			cql:  "drop table ks.t;",
			want: &DropStmt{Kind: DropTable, Keyspace: "ks", Name: "t"},
		},
		{
			name: "quoted reserved words are identifiers",
			cql:  `SELECT "select" FROM "from"."table" WHERE "where" = 1`,
			want: &SelectStmt{Table: TableName{Keyspace: "from", Name: "table"}, Selectors: []Selector{{Expr: col("select")}},
				Where: []Relation{eq("where", num("1"))}},
		},
		{
			name: "unreserved keywords are identifiers",
			cql:  "SELECT key, ttl, type, count, json FROM system.local WHERE key = 'local'",
			want: &SelectStmt{Table: TableName{Keyspace: "system", Name: "local"},
				Selectors: []Selector{{Expr: col("key")}, {Expr: col("ttl")}, {Expr: col("type")}, {Expr: col("count")}, {Expr: col("json")}},
				Where:     []Relation{eq("key", str("local"))}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parsed, err := Parse(tt.cql)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got := parsed.Statement
			zeroPos(reflect.ValueOf(got))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Parse(%q):\n got %s\nwant %s", tt.cql, dump(got), dump(tt.want))
			}
			if fmt.Sprintf("%q", parsed.MarkerNames) != fmt.Sprintf("%q", tt.markers) {
				t.Errorf("marker names = %q, want %q", parsed.MarkerNames, tt.markers)
			}
		})
	}
}

func TestParsePositions(t *testing.T) {
	parsed, err := Parse("SELECT a\nFROM ks.t\nWHERE  k = ? AND c > 'x'")
	if err != nil {
		t.Fatal(err)
	}
	s := parsed.Statement.(*SelectStmt)
	checks := []struct {
		what      string
		pos       Pos
		line, col int
	}{
		{"selector", s.Selectors[0].Expr.(*ColumnSelector).Pos, 1, 7},
		{"table", s.Table.Pos, 2, 5},
		{"first relation", s.Where[0].Pos, 3, 7},
		{"marker", s.Where[0].Value.(*Marker).Pos, 3, 11},
		{"second relation", s.Where[1].Pos, 3, 17},
		{"string", s.Where[1].Value.(*Literal).Pos, 3, 21},
	}
	for _, c := range checks {
		if c.pos.Line != c.line || c.pos.Col != c.col {
			t.Errorf("%s at %d:%d, want %d:%d", c.what, c.pos.Line, c.pos.Col, c.line, c.col)
		}
	}
}

func TestParseSyntaxErrors(t *testing.T) {
	tests := []struct {
		name, cql, want, token string
	}{
		{"misspelled keyword", "SELECT * FRM t", "line 1:9 mismatched input 'FRM' expecting K_FROM", "FRM"},
		{"reserved word as table", "SELECT * FROM select", "line 1:14 no viable alternative at input 'select'", "select"},
		{"reserved word as column in create", "CREATE TABLE t (select int PRIMARY KEY)", "line 1:16 no viable alternative at input 'select'", "select"},
		{"reserved word as insert column", "INSERT INTO t (k, FROM) VALUES (1, 2)", "line 1:18 no viable alternative at input 'FROM'", "FROM"},
		{"reserved word as keyspace", "USE keyspace", "line 1:4 no viable alternative at input 'keyspace'", "keyspace"},
		{"reserved word as alias", "SELECT a AS limit FROM t", "line 1:12 no viable alternative at input 'limit'", "limit"},
		{"string ttl", "INSERT INTO kv (k) VALUES (1) USING TTL 'x'", "line 1:40 no viable alternative at input ''x''", "'x'"},
		{"float timestamp", "UPDATE kv USING TIMESTAMP 1.5 SET v = 'a' WHERE k = 1", "line 1:26 no viable alternative at input '1.5'", "1.5"},
		{"ttl in delete", "DELETE FROM kv USING TTL 5 WHERE k = 1", "line 1:21 mismatched input 'TTL' expecting K_TIMESTAMP", "TTL"},
		{"unterminated comment", "SELECT * FROM kv /* no end", "line 1:26 mismatched character '<EOF>' expecting '*'", "<EOF>"},
		{"reserved word in where", "SELECT * FROM t WHERE token = 1", "line 1:22 no viable alternative at input 'token'", "token"},
		{"empty quoted identifier", `SELECT "" FROM t`, `line 1:7 no viable alternative at input '""'`, `""`},
		{"missing values keyword", "INSERT INTO t (a) VALUE (1)", "line 1:18 mismatched input 'VALUE' expecting K_VALUES", "VALUE"},
		{"missing where", "UPDATE t SET a = 1", "line 1:18 mismatched input '<EOF>' expecting K_WHERE", "<EOF>"},
		{"missing term at the end", "SELECT * FROM t LIMIT", "line 1:21 no viable alternative at input '<EOF>'", "<EOF>"},
		{"missing closing parenthesis", "INSERT INTO t (a, b) VALUES (1, 2", "line 1:33 mismatched input '<EOF>' expecting ')'", "<EOF>"},
		{"trailing garbage", "SELECT * FROM t;;", "line 1:16 no viable alternative at input ';'", ";"},
		{"two statements", "USE a; USE b", "line 1:7 no viable alternative at input 'USE'", "USE"},
		{"double operator on a later line", "SELECT *\nFROM t\nWHERE k = = 1", "line 3:10 no viable alternative at input '='", "="},
		{"unknown operator", "SELECT * FROM t WHERE k @ 1", "line 1:24 token recognition error at: '@'", "@"},
		{"unterminated string", "SELECT * FROM t WHERE k = 'abc", "line 1:26 token recognition error at: ''abc'", "'abc"},
		{"select in a batch", "BEGIN BATCH SELECT * FROM t APPLY BATCH", "line 1:12 mismatched input 'SELECT' expecting K_APPLY", "SELECT"},
		{"batch without apply", "BEGIN BATCH INSERT INTO t (k) VALUES (1)", "line 1:40 mismatched input '<EOF>' expecting K_APPLY", "<EOF>"},
		{"unknown statement", "FROBNICATE t", "line 1:0 no viable alternative at input 'FROBNICATE'", "FROBNICATE"},
		{"unknown create", "CREATE WIDGET w", "line 1:7 no viable alternative at input 'WIDGET'", "WIDGET"},
		{"empty statement", "", "line 1:0 no viable alternative at input '<EOF>'", "<EOF>"},
		{"empty tuple", "INSERT INTO t (a) VALUES (())", "line 1:27 no viable alternative at input ')'", ")"},
		{"in without list", "SELECT * FROM t WHERE k IN 1", "line 1:27 mismatched input '1' expecting '('", "1"},
		{"vector without dimension", "CREATE TABLE t (k int PRIMARY KEY, v vector<float, x>)", "line 1:51 mismatched input 'x' expecting INTEGER", "x"},
		{"if without exists", "DELETE FROM t WHERE k = 1 IF", "line 1:28 no viable alternative at input '<EOF>'", "<EOF>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.cql)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) = %v, want a syntax error", tt.cql, err)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse(%q):\n got %s\nwant %s", tt.cql, err, tt.want)
			}
			if se.Token != tt.token {
				t.Errorf("offending token = %q, want %q", se.Token, tt.token)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	// Statements that parse as far as the grammar goes but that Cassandra's
	// parser refuses with an Invalid error.
	tests := []struct {
		name, cql, want string
	}{
		{"two primary keys", "CREATE TABLE t (a int PRIMARY KEY, b int PRIMARY KEY)", "Multiple PRIMARY KEYs specified (exactly one required)"},
		{"primary key twice", "CREATE TABLE t (a int PRIMARY KEY, b int, PRIMARY KEY (b))", "Multiple PRIMARY KEYs specified (exactly one required)"},
		{"prepend of another column", "UPDATE t SET l = [1] + m WHERE k = 1", "Only expressions of the form X = <value> + X are supported."},
		{"custom type", "CREATE TABLE t (k int PRIMARY KEY, v 'org.example.MyType')", "Custom types are not supported: 'org.example.MyType'"},
		{"zero-dimension vector", "CREATE TABLE t (k int PRIMARY KEY, v vector<float, 0>)", "vectors must have a dimension greater than 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.cql)
			var ie *InvalidError
			if !errors.As(err, &ie) || err.Error() != tt.want {
				t.Errorf("Parse(%q) = %v, want invalid %q", tt.cql, err, tt.want)
			}
		})
	}
}

func TestParseScript(t *testing.T) {
	stmts, err := ParseScript(";; USE a; INSERT INTO t (k) VALUES (?) ;\n SELECT * FROM t WHERE k = :k;;")
	if err != nil || len(stmts) != 3 {
		t.Fatalf("%d statements, %v", len(stmts), err)
	}
	if _, ok := stmts[1].Statement.(*InsertStmt); !ok || len(stmts[1].MarkerNames) != 1 || stmts[2].MarkerNames[0] != "k" {
		t.Errorf("statements %#v, markers %q %q", stmts[1].Statement, stmts[1].MarkerNames, stmts[2].MarkerNames)
	}
	if stmts, err := ParseScript("USE a USE b"); err == nil || len(stmts) != 1 {
		t.Errorf("two statements without a semicolon: %d, %v", len(stmts), err)
	}
	if stmts, err := ParseScript(" ; "); err != nil || len(stmts) != 0 {
		t.Errorf("no statement: %d, %v", len(stmts), err)
	}
}
