package translate

import (
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/sharding"
)

// testSchema returns a schema holding the seed documents' tables, built by
// hand, plus two tables of the tests' own:
//
//	cycling.cyclist_name (id uuid PRIMARY KEY, lastname text, firstname text)
//	cycling.rank_by_year_and_name (race_year int, race_name text, cyclist_name text, rank int,
//	    PRIMARY KEY ((race_year, race_name), rank))
//	cycling.cyclist_category (category text, points int, id uuid, lastname text,
//	    PRIMARY KEY (category, points)) WITH CLUSTERING ORDER BY (points DESC)
//	testks.test (pk1 int, pk2 int, ck1 int, ck2 int, data int, PRIMARY KEY ((pk1, pk2), ck1, ck2))
//	testks.kv (k int PRIMARY KEY, v text)
//	testks.odd ("K?ey" text, "c""q" int, "wh?at ""x""" text, v int, PRIMARY KEY ("K?ey", "c""q"))
//	    WITH CLUSTERING ORDER BY ("c""q" DESC)
//
// and an empty keyspace inventory.
func testSchema() *pgschema.Schema {
	i, text, uuid := pgschema.Scalar(pgschema.Int), pgschema.Scalar(pgschema.Text), pgschema.Scalar(pgschema.UUID)
	pk := func(name string, typ *pgschema.Type, pos int) *pgschema.Column {
		return &pgschema.Column{Name: name, Type: typ, Kind: pgschema.PartitionKey, Position: pos}
	}
	ck := func(name string, typ *pgschema.Type, pos int, desc bool) *pgschema.Column {
		return &pgschema.Column{Name: name, Type: typ, Kind: pgschema.Clustering, Position: pos, Desc: desc}
	}
	reg := func(name string, typ *pgschema.Type) *pgschema.Column {
		return &pgschema.Column{Name: name, Type: typ, Kind: pgschema.Regular, Position: -1}
	}
	table := func(ks, name string, cols ...*pgschema.Column) *pgschema.Table {
		return pgschema.NewTable(ks, name, [16]byte{byte(len(name))}, cols, map[string]string{})
	}
	keyspace := func(name string, tables ...*pgschema.Table) *pgschema.Keyspace {
		k := &pgschema.Keyspace{Name: name, DurableWrites: true, PGSchema: pgschema.PGSchemaName(name),
			Replication: sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: 1},
			Tables:      map[string]*pgschema.Table{}, Types: map[string]*pgschema.Type{}}
		for _, t := range tables {
			k.Tables[t.Name] = t
		}
		return k
	}
	return pgschema.NewSchema([16]byte{1}, map[string]*pgschema.Keyspace{
		"cycling": keyspace("cycling",
			table("cycling", "cyclist_name", pk("id", uuid, 0), reg("lastname", text), reg("firstname", text)),
			table("cycling", "rank_by_year_and_name", pk("race_year", i, 0), pk("race_name", text, 1),
				reg("cyclist_name", text), ck("rank", i, 0, false)),
			table("cycling", "cyclist_category", pk("category", text, 0), ck("points", i, 0, true),
				reg("id", uuid), reg("lastname", text))),
		"testks": keyspace("testks",
			table("testks", "test", pk("pk1", i, 0), pk("pk2", i, 1), ck("ck1", i, 0, false), ck("ck2", i, 1, false),
				reg("data", i)),
			table("testks", "kv", pk("k", i, 0), reg("v", text)),
			table("testks", "odd", reg("wh?at \"x\"", text), ck(`c"q`, i, 0, true), reg("v", i), pk("K?ey", text, 0))),
		"inventory": keyspace("inventory"),
	})
}

// prepare parses and plans cql for a session using keyspace ks.
func prepare(ks, cql string) (Plan, error) {
	parsed, err := Parse(cql)
	if err != nil {
		return nil, err
	}
	return Prepare(parsed, ks, testSchema())
}

func mustPrepare(t *testing.T, ks, cql string) Plan {
	t.Helper()
	plan, err := prepare(ks, cql)
	if err != nil {
		t.Fatalf("Prepare(%q): %v", cql, err)
	}
	return plan
}

func mustSelect(t *testing.T, ks, cql string) *Select {
	t.Helper()
	plan := mustPrepare(t, ks, cql)
	s, ok := plan.(*Select)
	if !ok {
		t.Fatalf("Prepare(%q) = %T, want *Select", cql, plan)
	}
	return s
}

func mustWrite(t *testing.T, ks, cql string) *Write {
	t.Helper()
	plan := mustPrepare(t, ks, cql)
	w, ok := plan.(*Write)
	if !ok {
		t.Fatalf("Prepare(%q) = %T, want *Write", cql, plan)
	}
	return w
}

// specs renders column specifications as name:type.
func specs(cs []ColumnSpec) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.Name + ":" + c.Type.String()
	}
	return strings.Join(parts, ", ")
}

// restrictionList renders restrictions as "col op", with the number of
// values for IN ("IN(2)", or "IN ?" for a bound list).
func restrictionList(rs []Restriction) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.Column.Name + " " + r.Op.String()
		switch {
		case r.Op == OpIN && r.ListMarker:
			parts[i] += " ?"
		case r.Op == OpIN:
			parts[i] += "(" + strconv.Itoa(len(r.Values)) + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// outputList renders what each result column is computed from: a column's
// value, "stored token" for the partition's token, or token(cols) for a
// token hashed from values.
func outputList(s *Select) string {
	slotName := func(si int) string {
		sl := s.Slots[si]
		switch sl.Kind {
		case SlotToken:
			return "stored token"
		case SlotWritetime:
			return "writetime " + sl.Column.Name
		case SlotTTL:
			return "ttl " + sl.Column.Name
		}
		return sl.Column.Name
	}
	parts := make([]string, len(s.Outputs))
	for i, o := range s.Outputs {
		switch e := o.(type) {
		case *SlotRef:
			parts[i] = slotName(e.Slot)
		case *TokenOf:
			var slots []string
			for _, si := range e.Slots {
				slots = append(slots, slotName(si))
			}
			parts[i] = "token(" + strings.Join(slots, ", ") + ")"
		default:
			parts[i] = fmt.Sprintf("%T", o)
		}
	}
	return strings.Join(parts, ", ")
}

func TestPlanSelect(t *testing.T) {
	tests := []struct {
		name    string
		cql     string
		route   Route
		result  string // name:type of each result column
		outputs string
		keys    string
		filters string
	}{
		// The seed documents' queries, in keyspace cycling.
		{
			name:    "seed token of a uuid key",
			cql:     "SELECT token(id), id, lastname, firstname FROM cyclist_name;",
			route:   RouteScan,
			result:  "system.token(id):bigint, id:uuid, lastname:text, firstname:text",
			outputs: "stored token, id, lastname, firstname",
		},
		{
			name:    "seed token of a composite key",
			cql:     "SELECT token(race_year, race_name), race_year, race_name, cyclist_name, rank from rank_by_year_and_name;",
			route:   RouteScan,
			result:  "system.token(race_year, race_name):bigint, race_year:int, race_name:text, cyclist_name:text, rank:int",
			outputs: "stored token, race_year, race_name, cyclist_name, rank",
		},
		{
			name:    "seed token of the partition key of a clustered table",
			cql:     "SELECT token(category), category, points, id, lastname from cyclist_category;",
			route:   RouteScan,
			result:  "system.token(category):bigint, category:text, points:int, id:uuid, lastname:text",
			outputs: "stored token, category, points, id, lastname",
		},
		{
			name:    "seed token of a clustering column is hashed from its value",
			cql:     " SELECT token(points), category, points, id, lastname from cyclist_category;",
			route:   RouteScan,
			result:  "system.token(points):bigint, category:text, points:int, id:uuid, lastname:text",
			outputs: "token(points), category, points, id, lastname",
		},
		{
			name:    "seed full scan",
			cql:     "SELECT * FROM testks.test ;",
			route:   RouteScan,
			result:  "pk1:int, pk2:int, ck1:int, ck2:int, data:int",
			outputs: "pk1, pk2, ck1, ck2, data",
		},
		{
			name:    "seed one partition",
			cql:     "SELECT * FROM testks.test WHERE pk1 = 1 and pk2 = 1 ;",
			route:   RoutePartitions,
			result:  "pk1:int, pk2:int, ck1:int, ck2:int, data:int",
			outputs: "pk1, pk2, ck1, ck2, data",
			keys:    "pk1 =, pk2 =",
		},
		{
			name:    "seed one row",
			cql:     "SELECT * FROM testks.test WHERE pk1 = 1 and pk2 = 1 and ck1 = 1 and ck2 = 1;",
			route:   RoutePartitions,
			result:  "pk1:int, pk2:int, ck1:int, ck2:int, data:int",
			outputs: "pk1, pk2, ck1, ck2, data",
			keys:    "pk1 =, pk2 =",
			filters: "ck1 =, ck2 =",
		},
		{
			name:    "seed IN on the last clustering column",
			cql:     "SELECT * FROM testks.test WHERE pk1 = 1 and pk2 = 2 and ck1 = 1 and ck2 IN ( 1, 2, 3 ) ;",
			route:   RoutePartitions,
			result:  "pk1:int, pk2:int, ck1:int, ck2:int, data:int",
			outputs: "pk1, pk2, ck1, ck2, data",
			keys:    "pk1 =, pk2 =",
			filters: "ck1 =, ck2 IN(3)",
		},
		{
			name:    "seed range on the last clustering column",
			cql:     "SELECT * FROM testks.test WHERE pk1 = 1 and pk2 = 2 and ck1 = 1 and ck2 >= 2 and ck2 < 100 ;",
			route:   RoutePartitions,
			result:  "pk1:int, pk2:int, ck1:int, ck2:int, data:int",
			outputs: "pk1, pk2, ck1, ck2, data",
			keys:    "pk1 =, pk2 =",
			filters: "ck1 =, ck2 >=, ck2 <",
		},
		{
			name:    "seed IN on the partition key with a range",
			cql:     "SELECT * FROM testks.test WHERE pk1 = 1 and pk2 IN ( 1, 2 ) and ck1 = 1 and ck2 >= 2 ;",
			route:   RoutePartitions,
			result:  "pk1:int, pk2:int, ck1:int, ck2:int, data:int",
			outputs: "pk1, pk2, ck1, ck2, data",
			keys:    "pk1 =, pk2 IN(2)",
			filters: "ck1 =, ck2 >=",
		},
		{
			name:    "seed IN on the partition key",
			cql:     "SELECT * FROM testks.test WHERE pk1 = 1 and pk2 IN ( 1, 2 ) ;",
			route:   RoutePartitions,
			result:  "pk1:int, pk2:int, ck1:int, ck2:int, data:int",
			outputs: "pk1, pk2, ck1, ck2, data",
			keys:    "pk1 =, pk2 IN(2)",
		},
		{
			name:    "seed IN on the partition key and a clustering column",
			cql:     "SELECT * FROM testks.test WHERE pk1 = 1 and pk2 IN ( 1, 2 ) and ck1 = 1 and ck2 IN ( 1, 2 ) ;",
			route:   RoutePartitions,
			result:  "pk1:int, pk2:int, ck1:int, ck2:int, data:int",
			outputs: "pk1, pk2, ck1, ck2, data",
			keys:    "pk1 =, pk2 IN(2)",
			filters: "ck1 =, ck2 IN(2)",
		},
		// SELECT * lists the partition key, the clustering columns, then the
		// others by name.
		{
			name:    "star with regular columns sorted",
			cql:     "SELECT * FROM cyclist_name WHERE id = 41d01b63-244e-435d-bd6d-5dc8a0addb8c",
			route:   RoutePartitions,
			result:  "id:uuid, firstname:text, lastname:text",
			outputs: "id, firstname, lastname",
			keys:    "id =",
		},
		{
			name:    "star with a composite key and a clustering column",
			cql:     "SELECT * FROM rank_by_year_and_name",
			route:   RouteScan,
			result:  "race_year:int, race_name:text, rank:int, cyclist_name:text",
			outputs: "race_year, race_name, rank, cyclist_name",
		},
		{
			name:    "star with a descending clustering column",
			cql:     "SELECT * FROM cycling.cyclist_category WHERE category = 'best' AND points > 1",
			route:   RoutePartitions,
			result:  "category:text, points:int, id:uuid, lastname:text",
			outputs: "category, points, id, lastname",
			keys:    "category =",
			filters: "points >",
		},
		{
			name:    "star of a table with quoted names",
			cql:     `SELECT * FROM testks.odd`,
			route:   RouteScan,
			result:  `K?ey:text, c"q:int, v:int, wh?at "x":text`,
			outputs: `K?ey, c"q, v, wh?at "x"`,
		},
		// Selectors.
		{
			name:    "aliases, writetime and ttl",
			cql:     `SELECT lastname AS "Last", writetime(lastname), ttl(firstname) AS t, token(id) AS tok FROM cyclist_name`,
			route:   RouteScan,
			result:  "Last:text, writetime(lastname):bigint, t:int, tok:bigint",
			outputs: "lastname, writetime lastname, ttl firstname, stored token",
		},
		{
			name:    "token of key columns in another order is hashed",
			cql:     "SELECT token(race_name, race_year) FROM rank_by_year_and_name",
			route:   RouteScan,
			result:  "system.token(race_name, race_year):bigint",
			outputs: "token(race_name, race_year)",
		},
		{
			name:    "generated result names hold column names unquoted",
			cql:     `SELECT token("K?ey"), writetime("wh?at ""x""") FROM testks.odd`,
			route:   RouteScan,
			result:  `system.token(K?ey):bigint, writetime(wh?at "x"):bigint`,
			outputs: `stored token, writetime wh?at "x"`,
		},
		{
			name:    "a column selected twice is fetched once",
			cql:     "SELECT id, id AS again FROM cyclist_name",
			route:   RouteScan,
			result:  "id:uuid, again:uuid",
			outputs: "id, id",
		},
		// Other restrictions Cassandra accepts.
		{
			name:    "IN on the first partition key column",
			cql:     "SELECT data FROM testks.test WHERE pk1 IN (1, 2) AND pk2 = 3",
			route:   RoutePartitions,
			result:  "data:int",
			outputs: "data",
			keys:    "pk1 IN(2), pk2 =",
		},
		{
			name:    "IN with a bound list",
			cql:     "SELECT data FROM testks.test WHERE pk1 = ? AND pk2 IN ? AND ck1 IN ?",
			route:   RoutePartitions,
			result:  "data:int",
			outputs: "data",
			keys:    "pk1 =, pk2 IN ?",
			filters: "ck1 IN ?",
		},
		{
			name:    "IN on an earlier clustering column then EQ",
			cql:     "SELECT data FROM testks.test WHERE pk1 = 1 AND pk2 = 2 AND ck1 IN (1, 2) AND ck2 = 3",
			route:   RoutePartitions,
			result:  "data:int",
			outputs: "data",
			keys:    "pk1 =, pk2 =",
			filters: "ck1 IN(2), ck2 =",
		},
		{
			name:    "both bounds on a clustering column",
			cql:     "SELECT data FROM testks.test WHERE pk1 = 1 AND pk2 = 2 AND ck1 = 1 AND ck2 < 9 AND ck2 > 1",
			route:   RoutePartitions,
			result:  "data:int",
			outputs: "data",
			keys:    "pk1 =, pk2 =",
			filters: "ck1 =, ck2 <, ck2 >",
		},
		{
			name:    "allow filtering on part of the partition key",
			cql:     "SELECT * FROM testks.test WHERE pk1 = 1 ALLOW FILTERING",
			route:   RouteScan,
			result:  "pk1:int, pk2:int, ck1:int, ck2:int, data:int",
			outputs: "pk1, pk2, ck1, ck2, data",
			filters: "pk1 =",
		},
		{
			name:    "allow filtering on a slice of the partition key",
			cql:     "SELECT data FROM testks.test WHERE pk1 = 1 AND pk2 > 1 ALLOW FILTERING",
			route:   RouteScan,
			result:  "data:int",
			outputs: "data",
			filters: "pk1 =, pk2 >",
		},
		{
			name:    "allow filtering on a regular column",
			cql:     "SELECT data FROM testks.test WHERE data = 1 ALLOW FILTERING",
			route:   RouteScan,
			result:  "data:int",
			outputs: "data",
			filters: "data =",
		},
		{
			name:    "allow filtering skips the clustering prefix rules",
			cql:     "SELECT data FROM testks.test WHERE pk1 = 1 AND pk2 = 1 AND ck1 > 1 AND ck2 = 1 ALLOW FILTERING",
			route:   RoutePartitions,
			result:  "data:int",
			outputs: "data",
			keys:    "pk1 =, pk2 =",
			filters: "ck1 >, ck2 =",
		},
		{
			name:    "allow filtering on a clustering column alone",
			cql:     "SELECT data FROM testks.test WHERE ck2 = 1 ALLOW FILTERING",
			route:   RouteScan,
			result:  "data:int",
			outputs: "data",
			filters: "ck2 =",
		},
		{
			name:    "virtual system table",
			cql:     "SELECT cluster_name, release_version FROM system.local WHERE key = 'local'",
			route:   RoutePartitions,
			result:  "cluster_name:text, release_version:text",
			outputs: "cluster_name, release_version",
			keys:    "key =",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mustSelect(t, "cycling", tt.cql)
			if s.Route != tt.route {
				t.Errorf("route = %d, want %d", s.Route, tt.route)
			}
			if got := specs(s.Result); got != tt.result {
				t.Errorf("result columns:\n got %s\nwant %s", got, tt.result)
			}
			if got := outputList(s); got != tt.outputs {
				t.Errorf("outputs:\n got %s\nwant %s", got, tt.outputs)
			}
			if got := restrictionList(s.Keys); got != tt.keys {
				t.Errorf("keys = %q, want %q", got, tt.keys)
			}
			if got := restrictionList(s.Filters); got != tt.filters {
				t.Errorf("filters = %q, want %q", got, tt.filters)
			}
			for _, r := range s.Result {
				if r.Keyspace != s.Table.Keyspace || r.Table != s.Table.Name {
					t.Errorf("result column %s belongs to %s.%s", r.Name, r.Keyspace, r.Table)
				}
			}
			if s.Table.Virtual != (s.SQL == "") || s.Table.Virtual != (s.ScanSQL == "") {
				t.Errorf("virtual=%v but SQL=%q ScanSQL=%q", s.Table.Virtual, s.SQL, s.ScanSQL)
			}
		})
	}
}

func TestPlanWrite(t *testing.T) {
	tests := []struct {
		name  string
		cql   string
		kind  WriteKind
		keys  string
		key   []string // hex of each key's constant value
		cells string   // columns the SQL sets, in order
	}{
		{
			name:  "seed insert with a uuid key",
			cql:   "INSERT INTO cyclist_name (id, lastname, firstname) VALUES (41d01b63-244e-435d-bd6d-5dc8a0addb8c, 'A', 'J');",
			kind:  WriteUpsert,
			keys:  "id =",
			key:   []string{"41d01b63244e435dbd6d5dc8a0addb8c"},
			cells: "lastname, firstname, [row marker]",
		},
		{
			name:  "seed insert with a composite key",
			cql:   "INSERT INTO rank_by_year_and_name (race_year, race_name, cyclist_name, rank) VALUES (2000, '1', 'A', 1);",
			kind:  WriteUpsert,
			keys:  "race_year =, race_name =, rank =",
			key:   []string{"000007d0", "31", "00000001"},
			cells: "cyclist_name, [row marker]",
		},
		{
			name:  "seed insert with a descending clustering column",
			cql:   "INSERT INTO cyclist_category (category, points, id, lastname) VALUES ('best', 1, 41d01b63-244e-435d-bd6d-5dc8a0addb8c, 'J');",
			kind:  WriteUpsert,
			keys:  "category =, points =",
			key:   []string{"62657374", "00000001"},
			cells: "id, lastname, [row marker]",
		},
		{
			name:  "seed insert with columns in key order",
			cql:   "INSERT INTO testks.test (pk1, pk2, ck1, ck2, data) VALUES ( 1,2,1,4,8);",
			kind:  WriteUpsert,
			keys:  "pk1 =, pk2 =, ck1 =, ck2 =",
			key:   []string{"00000001", "00000002", "00000001", "00000004"},
			cells: "data, [row marker]",
		},
		{
			name:  "insert with columns out of key order",
			cql:   "INSERT INTO testks.test (data, ck2, pk2, ck1, pk1) VALUES (8, 4, 2, 3, 1)",
			kind:  WriteUpsert,
			keys:  "pk1 =, pk2 =, ck1 =, ck2 =",
			key:   []string{"00000001", "00000002", "00000003", "00000004"},
			cells: "data, [row marker]",
		},
		{
			name:  "insert of the key only writes the row marker",
			cql:   "INSERT INTO cycling.cyclist_name (id) VALUES (41d01b63-244e-435d-bd6d-5dc8a0addb8c)",
			kind:  WriteUpsert,
			keys:  "id =",
			key:   []string{"41d01b63244e435dbd6d5dc8a0addb8c"},
			cells: "[row marker]",
		},
		{
			name:  "update",
			cql:   "UPDATE testks.test SET data = 5 WHERE pk1 = 1 AND pk2 IN (1, 2) AND ck1 = 3 AND ck2 = 4",
			kind:  WriteUpsert,
			keys:  "pk1 =, pk2 IN(2), ck1 =, ck2 =",
			cells: "data",
		},
		{
			name:  "delete a row",
			cql:   "DELETE FROM testks.test WHERE ck2 = 4 AND ck1 = 3 AND pk2 = 2 AND pk1 = 1",
			kind:  WriteDeleteRow,
			keys:  "pk1 =, pk2 =, ck1 =, ck2 =",
			key:   []string{"00000001", "00000002", "00000003", "00000004"},
			cells: "[deletion]",
		},
		{
			name:  "delete columns writes null cells",
			cql:   "DELETE lastname, firstname FROM cycling.cyclist_name WHERE id IN ?",
			kind:  WriteUpsert,
			keys:  "id IN ?",
			cells: "lastname, firstname",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := mustWrite(t, "cycling", tt.cql)
			if w.Kind != tt.kind {
				t.Errorf("kind = %d, want %d", w.Kind, tt.kind)
			}
			if got := restrictionList(w.Keys); got != tt.keys {
				t.Errorf("keys = %q, want %q", got, tt.keys)
			}
			for i, want := range tt.key {
				if got := hex.EncodeToString(w.Keys[i].Values[0].Const); got != want || w.Keys[i].Values[0].Marker != -1 {
					t.Errorf("key %d = %s (marker %d), want constant %s", i, got, w.Keys[i].Values[0].Marker, want)
				}
			}
			if got := writtenCells(w); got != tt.cells {
				t.Errorf("cells = %q, want %q", got, tt.cells)
			}
			checkSQL(t, w.SQL, w.Params)
		})
	}
}

// writtenCells lists the cells a write's SQL sets, from its parameters.
func writtenCells(w *Write) string {
	var out []string
	for i, p := range w.Params {
		// The row marker's write time comes with its expiry; the write's
		// time alone is compared with recorded deletions.
		marker := i+1 < len(w.Params) && w.Params[i+1].Kind == ParamExpiry && !w.Params[i+1].Cell
		switch {
		case p.Kind == ParamValue:
			out = append(out, p.Column.Name)
		case p.Kind == ParamWritetime && !p.Cell && w.Kind == WriteDeleteRow:
			out = append(out, "[deletion]")
		case p.Kind == ParamWritetime && !p.Cell && marker:
			out = append(out, "[row marker]")
		}
	}
	return strings.Join(out, ", ")
}

func TestPlanSeedSchemaChanges(t *testing.T) {
	schema := testSchema()
	for i, cql := range seedStatements {
		if !strings.Contains(cql, "CREATE") && !strings.HasPrefix(cql, "USE") {
			continue
		}
		t.Run(fmt.Sprintf("seed statement %d", i), func(t *testing.T) {
			parsed, err := Parse(cql)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := Prepare(parsed, "cycling", schema)
			if err != nil {
				t.Fatalf("Prepare(%q): %v", cql, err)
			}
			switch p := plan.(type) {
			case *Use:
				if p.Keyspace != "cycling" {
					t.Errorf("USE keyspace = %q", p.Keyspace)
				}
			case *SchemaChange:
				if p.NewKeyspace != nil {
					if p.NewKeyspace.Name != p.Keyspace || p.NewKeyspace.Replication.Class == "" {
						t.Errorf("keyspace %q planned as %+v", p.Keyspace, p.NewKeyspace)
					}
					return
				}
				if p.NewTable == nil {
					t.Fatalf("no table planned")
				}
				// Where the test schema holds the table, the plan builds the
				// same definition.
				if have := schema.Table(p.Keyspace, p.Name); have != nil {
					if got, want := p.NewTable.CreateStatement(), have.CreateStatement(); got != want {
						t.Errorf("planned table:\n%s\nwant\n%s", got, want)
					}
					for _, c := range have.Columns {
						if pc := p.NewTable.Column(c.Name); pc == nil || pc.Desc != c.Desc || pc.Kind != c.Kind || pc.Position != c.Position {
							t.Errorf("column %s planned as %+v, want %+v", c.Name, pc, c)
						}
					}
				}
			default:
				t.Fatalf("plan is %T", plan)
			}
		})
	}
	// The replication options are the seeds' own.
	for _, tt := range []struct {
		cql, class string
		factors    map[string]int
	}{
		{seedStatements[0], sharding.SimpleStrategyClass, nil},
		{seedStatements[13], sharding.NetworkTopologyStrategyClass, map[string]int{"us-east": 3, "eu-west": 3}},
	} {
		p := mustPrepare(t, "", tt.cql).(*SchemaChange)
		rep := p.NewKeyspace.Replication
		if rep.Class != tt.class || (tt.factors == nil && rep.Factor != 1) || fmt.Sprint(rep.DCFactors) != fmt.Sprint(tt.factors) {
			t.Errorf("%s: replication %+v", p.Keyspace, rep)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	const uuid = "41d01b63-244e-435d-bd6d-5dc8a0addb8c"
	const filtering = "Cannot execute this query as it might involve data filtering and thus may have " +
		"unpredictable performance. If you want to execute this query despite the performance " +
		"unpredictability, use ALLOW FILTERING"
	full := "pk1 = 1 AND pk2 = 1 AND "
	tests := []struct {
		name, ks, cql, want string
	}{
		// Names.
		{"unknown table", "cycling", "SELECT * FROM nope", "table nope does not exist"},
		{"unknown keyspace", "cycling", "SELECT * FROM nope.cyclist_name", "keyspace nope does not exist"},
		{"unknown keyspace in insert", "", "INSERT INTO nope.t (k) VALUES (1)", "keyspace nope does not exist"},
		{"no keyspace", "", "SELECT * FROM cyclist_name",
			"No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename"},
		{"no keyspace in update", "", "UPDATE cyclist_name SET lastname = 'x' WHERE id = " + uuid,
			"No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename"},
		{"unknown selected column", "cycling", "SELECT nope FROM cyclist_name", "Undefined column name nope in table cycling.cyclist_name"},
		{"unknown column in where", "", `SELECT * FROM testks.test WHERE "Nope" = 1`, `Undefined column name "Nope" in table testks.test`},
		{"unknown column in insert", "", "INSERT INTO testks.kv (k, w) VALUES (1, 2)", "Undefined column name w in table testks.kv"},
		{"unknown column in set", "", "UPDATE testks.kv SET w = 1 WHERE k = 1", "Undefined column name w in table testks.kv"},
		{"unknown column in delete", "", "DELETE w FROM testks.kv WHERE k = 1", "Undefined column name w in table testks.kv"},
		{"unknown column in a function", "", "SELECT writetime(w) FROM testks.kv", "Undefined column name w in table testks.kv"},

		// SELECT key rules.
		{"part of the partition key", "", "SELECT * FROM testks.test WHERE pk1 = 1", filtering},
		{"slice on the partition key", "", "SELECT * FROM cycling.cyclist_name WHERE id > " + uuid, filtering},
		{"slice on part of the partition key", "", "SELECT * FROM testks.test WHERE pk1 = 1 AND pk2 > 1", filtering},
		{"regular column", "", "SELECT * FROM testks.test WHERE data = 1", filtering},
		{"regular column with the partition key", "", "SELECT * FROM testks.test WHERE " + full + "data = 1", filtering},
		{"clustering column without the partition key", "", "SELECT * FROM testks.test WHERE ck1 = 1", filtering},
		{"clustering column after an unrestricted one", "", "SELECT * FROM testks.test WHERE " + full + "ck2 = 1",
			`PRIMARY KEY column "ck2" cannot be restricted as preceding column "ck1" is not restricted`},
		{"restriction written after a slice", "", "SELECT * FROM testks.test WHERE " + full + "ck1 > 1 AND ck2 = 1",
			`Clustering column "ck2" cannot be restricted (preceding column "ck1" is restricted by a non-EQ relation)`},
		{"restriction written before a slice", "", "SELECT * FROM testks.test WHERE ck2 = 1 AND " + full + "ck1 > 1",
			`PRIMARY KEY column "ck2" cannot be restricted (preceding column "ck1" is restricted by a non-EQ relation)`},
		{"IN written after a slice", "", "SELECT * FROM testks.test WHERE " + full + "ck1 <= 1 AND ck2 IN (1, 2)",
			`Clustering column "ck2" cannot be restricted (preceding column "ck1" is restricted by a non-EQ relation)`},
		{"two EQ", "", "SELECT * FROM testks.test WHERE pk1 = 1 AND pk1 = 2 AND pk2 = 1",
			"pk1 cannot be restricted by more than one relation if it includes an Equal"},
		{"EQ then slice", "", "SELECT * FROM testks.test WHERE " + full + "ck1 = 1 AND ck1 > 0",
			"ck1 cannot be restricted by more than one relation if it includes an Equal"},
		{"EQ then IN", "", "SELECT * FROM testks.test WHERE " + full + "ck1 = 1 AND ck1 IN (1)",
			"ck1 cannot be restricted by more than one relation if it includes an Equal"},
		{"IN then EQ", "", "SELECT * FROM testks.test WHERE pk1 IN (1, 2) AND pk1 = 1 AND pk2 = 1",
			"pk1 cannot be restricted by more than one relation if it includes a IN"},
		{"IN of one value then EQ", "", "SELECT * FROM testks.test WHERE pk1 IN (1) AND pk1 = 1 AND pk2 = 1",
			"pk1 cannot be restricted by more than one relation if it includes an Equal"},
		{"IN then slice", "", "SELECT * FROM testks.test WHERE " + full + "ck1 IN (1, 2) AND ck1 > 0",
			"ck1 cannot be restricted by more than one relation if it includes a IN"},
		{"slice then EQ", "", "SELECT * FROM testks.test WHERE " + full + "ck1 > 1 AND ck1 = 2",
			`Column "ck1" cannot be restricted by both an equality and an inequality relation`},
		{"slice then IN", "", "SELECT * FROM testks.test WHERE " + full + "ck1 > 1 AND ck1 IN (2)",
			`Column "ck1" cannot be restricted by both an equality and an inequality relation`},
		{"two start bounds", "", "SELECT * FROM testks.test WHERE " + full + "ck1 > 1 AND ck1 >= 2",
			"More than one restriction was found for the start bound on ck1"},
		{"two end bounds", "", "SELECT * FROM testks.test WHERE " + full + "ck1 < 1 AND ck1 <= 2",
			"More than one restriction was found for the end bound on ck1"},
		{"null EQ", "", "SELECT * FROM testks.test WHERE pk1 = null AND pk2 = 1",
			"Invalid null value in condition for column pk1"},
		{"null in IN", "", "SELECT * FROM testks.test WHERE pk1 = 1 AND pk2 IN (1, null)",
			"Invalid null value in condition for column pk2"},
		{"not equal", "", "SELECT * FROM testks.test WHERE pk1 != 1", `Unsupported "!=" relation: pk1 != 1`},
		{"not equal to a string", "", "SELECT * FROM testks.kv WHERE v != 'a'", `Unsupported "!=" relation: v != 'a'`},
		{"writetime of a key column", "", "SELECT writetime(pk1) FROM testks.test",
			"Cannot use selection function writetime on PRIMARY KEY part pk1"},
		{"ttl of a clustering column", "", "SELECT ttl(ck1) FROM testks.test",
			"Cannot use selection function ttl on PRIMARY KEY part ck1"},
		{"writetime without a column", "", "SELECT writetime() FROM testks.test",
			"Invalid number of arguments in call to function writetime: 1 required but 0 provided"},
		{"ttl of two columns", "", "SELECT ttl(data, data) FROM testks.test",
			"Invalid number of arguments in call to function ttl: 1 required but 2 provided"},

		// Literal and marker types.
		{"string for an int key", "", "SELECT * FROM testks.kv WHERE k = 'abc'", `Invalid STRING constant (abc) for "k" of type int`},
		{"int out of range", "", "INSERT INTO testks.kv (k, v) VALUES (99999999999, 'x')", "Unable to make int from '99999999999'"},
		{"integer for text", "", "INSERT INTO testks.kv (k, v) VALUES (1, 2)", `Invalid INTEGER constant (2) for "v" of type text`},
		{"string limit", "", "SELECT * FROM testks.kv LIMIT 'x'", `Invalid STRING constant (x) for "[limit]" of type int`},

		// INSERT.
		{"insert without the partition key", "", "INSERT INTO testks.test (pk1, ck1, ck2, data) VALUES (1, 1, 1, 1)",
			"Some partition key parts are missing: pk2"},
		{"insert without any key", "", "INSERT INTO testks.test (data) VALUES (1)",
			"Some partition key parts are missing: pk1, pk2"},
		{"insert without clustering columns", "", "INSERT INTO testks.test (pk1, pk2, data) VALUES (1, 1, 1)",
			"Some clustering keys are missing: ck1, ck2"},
		{"insert without the last clustering column", "", "INSERT INTO testks.test (pk1, pk2, ck1) VALUES (1, 1, 1)",
			"Some clustering keys are missing: ck2"},
		{"insert with a null key", "", "INSERT INTO testks.test (pk1, pk2, ck1, ck2) VALUES (1, null, 1, 1)",
			"Invalid null value in condition for column pk2"},
		{"insert with duplicate columns", "", "INSERT INTO testks.kv (k, v, k) VALUES (1, 'a', 2)", "The column names contains duplicates"},
		{"insert with fewer values", "", "INSERT INTO testks.kv (k, v) VALUES (1)", "Unmatched column names/values"},

		// UPDATE.
		{"update without part of the partition key", "", "UPDATE testks.test SET data = 1 WHERE pk1 = 1 AND ck1 = 1 AND ck2 = 1",
			"Some partition key parts are missing: pk2"},
		{"update without a clustering column", "", "UPDATE testks.test SET data = 1 WHERE " + full + "ck1 = 1",
			"Some clustering keys are missing: ck2"},
		{"update with a slice on the partition key", "", "UPDATE cycling.cyclist_name SET lastname = 'x' WHERE id > " + uuid,
			"Only EQ and IN relation are supported on the partition key (unless you use the token() function) for UPDATE statements"},
		{"update with a slice on a clustering column", "", "UPDATE testks.test SET data = 1 WHERE " + full + "ck1 = 1 AND ck2 > 1",
			"Slice restrictions are not supported on the clustering columns in UPDATE statements"},
		{"update with a regular column in where", "", "UPDATE cycling.cyclist_name SET lastname = 'x' WHERE id = " + uuid + " AND firstname = 'J'",
			"Non PRIMARY KEY columns found in where clause: firstname "},
		{"update with two regular columns in where", "", "UPDATE cycling.cyclist_name SET lastname = 'x' WHERE id = " + uuid + " AND firstname = 'J' AND lastname = 'A'",
			"Non PRIMARY KEY columns found in where clause: firstname, lastname "},
		{"update with token", "", "UPDATE cycling.cyclist_name SET lastname = 'x' WHERE token(id) = 1",
			"The token function cannot be used in WHERE clauses for UPDATE statements"},
		{"update of a key column", "", "UPDATE cycling.cyclist_name SET id = " + uuid + " WHERE id = " + uuid,
			"PRIMARY KEY part id found in SET part"},
		{"update with a null key", "", "UPDATE testks.kv SET v = 'a' WHERE k = null",
			"Invalid null value in condition for column k"},

		// DELETE.
		{"delete without part of the partition key", "", "DELETE FROM testks.test WHERE pk2 = 1 AND ck1 = 1 AND ck2 = 1",
			"Some partition key parts are missing: pk1"},
		{"delete with a slice on the partition key", "", "DELETE FROM cycling.cyclist_name WHERE id < " + uuid,
			"Only EQ and IN relation are supported on the partition key (unless you use the token() function) for DELETE statements"},
		{"delete with a regular column in where", "", "DELETE FROM testks.kv WHERE k = 1 AND v = 'a'",
			"Non PRIMARY KEY columns found in where clause: v "},
		{"delete with token", "", "DELETE FROM testks.kv WHERE token(k) > 1",
			"The token function cannot be used in WHERE clauses for DELETE statements"},
		{"delete of a key column", "", "DELETE k FROM testks.kv WHERE k = 1",
			"Invalid identifier k for deletion (should not be a PRIMARY KEY part)"},

		// BATCH.
		{"batch with a global ttl", "", "BEGIN BATCH USING TTL 5 INSERT INTO testks.kv (k) VALUES (1) APPLY BATCH",
			"Global TTL on the BATCH statement is not supported."},
		{"batch and statement timestamps", "", "BEGIN BATCH USING TIMESTAMP 1 INSERT INTO testks.kv (k) VALUES (1) USING TIMESTAMP 2; APPLY BATCH",
			"Timestamp must be set either on BATCH or individual statements"},
		{"batch with a bad statement", "", "BEGIN BATCH INSERT INTO testks.kv (k) VALUES (1); INSERT INTO testks.kv (v) VALUES ('a'); APPLY BATCH",
			"Some partition key parts are missing: k"},

		// Cassandra prints column names in these messages as they are,
		// unquoted; only "Undefined column name" and relations quote them.
		{"two EQ on a quoted name", "", `SELECT * FROM testks.odd WHERE "K?ey" = 'a' AND "K?ey" = 'b'`,
			"K?ey cannot be restricted by more than one relation if it includes an Equal"},
		{"two bounds on a quoted name", "", `SELECT * FROM testks.odd WHERE "K?ey" = 'a' AND "c""q" > 1 AND "c""q" > 2`,
			`More than one restriction was found for the start bound on c"q`},
		{"missing quoted clustering column", "", `INSERT INTO testks.odd ("K?ey", v) VALUES ('a', 1)`,
			`Some clustering keys are missing: c"q`},
		{"missing quoted partition key", "", `UPDATE testks.odd SET v = 1 WHERE "c""q" = 1`,
			"Some partition key parts are missing: K?ey"},
		{"quoted regular column in update where", "", `UPDATE testks.odd SET v = 1 WHERE "K?ey" = 'a' AND "c""q" = 1 AND "wh?at ""x""" = 'b'`,
			`Non PRIMARY KEY columns found in where clause: wh?at "x" `},
		{"quoted key column in set", "", `UPDATE testks.odd SET "K?ey" = 'b' WHERE "K?ey" = 'a' AND "c""q" = 1`,
			"PRIMARY KEY part K?ey found in SET part"},
		{"quoted key column deleted", "", `DELETE "c""q" FROM testks.odd WHERE "K?ey" = 'a' AND "c""q" = 1`,
			`Invalid identifier c"q for deletion (should not be a PRIMARY KEY part)`},
		{"writetime of a quoted key column", "", `SELECT writetime("K?ey") FROM testks.odd`,
			"Cannot use selection function writetime on PRIMARY KEY part K?ey"},
		{"two EQ on a quoted clustering column", "", `SELECT * FROM testks.odd WHERE "K?ey" = 'a' AND "c""q" = 1 AND "c""q" = 2`,
			`c"q cannot be restricted by more than one relation if it includes an Equal`},
		{"not equal on a quoted name", "", `SELECT * FROM testks.odd WHERE "wh?at ""x""" != 'a'`,
			`Unsupported "!=" relation: "wh?at ""x""" != 'a'`},
		{"unknown quoted column", "", `SELECT "Wh?at" FROM testks.odd`,
			`Undefined column name "Wh?at" in table testks.odd`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := prepare(tt.ks, tt.cql)
			if err == nil {
				t.Fatalf("Prepare(%q) = %T, want error %q", tt.cql, plan, tt.want)
			}
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Errorf("error %v is %T, want *InvalidError", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("Prepare(%q):\n got %s\nwant %s", tt.cql, err, tt.want)
			}
		})
	}
}

func TestPlanMetadata(t *testing.T) {
	tests := []struct {
		name, cql string
		vars      string
		pk        string
	}{
		{"select by the whole partition key", "SELECT * FROM testks.test WHERE pk1 = ? AND pk2 = ?",
			"pk1:int, pk2:int", "[0 1]"},
		{"key columns bound out of order", "SELECT * FROM testks.test WHERE pk2 = ? AND ck1 = ? AND pk1 = ?",
			"pk2:int, ck1:int, pk1:int", "[2 0]"},
		{"IN ? does not count", "SELECT * FROM testks.test WHERE pk1 = ? AND pk2 IN ?",
			"pk1:int, in(pk2):list<int>", "[]"},
		{"a constant key column", "SELECT * FROM testks.test WHERE pk1 = ? AND pk2 = 1",
			"pk1:int", "[]"},
		{"the last marker bound to a column wins", "SELECT * FROM testks.test WHERE pk1 = ? AND pk2 IN (?, ?)",
			"pk1:int, pk2:int, pk2:int", "[0 2]"},
		{"named markers", "SELECT * FROM testks.test WHERE pk1 = :a AND pk2 = :B",
			"a:int, b:int", "[0 1]"},
		{"limit", "SELECT * FROM cycling.cyclist_name WHERE id = ? LIMIT ?",
			"id:uuid, [limit]:int", "[0]"},
		{"IN ? on a clustering column and limit", "SELECT * FROM testks.test WHERE pk1 = ? AND pk2 = ? AND ck1 = ? AND ck2 IN ? LIMIT ?",
			"pk1:int, pk2:int, ck1:int, in(ck2):list<int>, [limit]:int", "[0 1]"},
		{"clustering slices only", "SELECT * FROM testks.test WHERE pk1 = 1 AND pk2 = 1 AND ck1 > ? AND ck1 < ?",
			"ck1:int, ck1:int", "[]"},
		{"clustering slice on a descending column", "SELECT * FROM cycling.cyclist_category WHERE category = ? AND points >= ? AND points < ?",
			"category:text, points:int, points:int", "[0]"},
		{"insert with ttl and timestamp", "INSERT INTO testks.test (pk1, pk2, ck1, ck2, data) VALUES (?, ?, ?, ?, ?) USING TTL ? AND TIMESTAMP ?",
			"pk1:int, pk2:int, ck1:int, ck2:int, data:int, [ttl]:int, [timestamp]:bigint", "[0 1]"},
		{"insert with columns out of order", "INSERT INTO testks.test (data, ck2, pk2, ck1, pk1) VALUES (?, ?, ?, ?, ?)",
			"data:int, ck2:int, pk2:int, ck1:int, pk1:int", "[4 2]"},
		{"insert with a constant key part", "INSERT INTO cycling.rank_by_year_and_name (race_year, race_name, cyclist_name, rank) VALUES (2000, ?, ?, ?)",
			"race_name:text, cyclist_name:text, rank:int", "[]"},
		{"update with using before set", "UPDATE cycling.cyclist_name USING TIMESTAMP ? AND TTL ? SET lastname = ?, firstname = ? WHERE id = ?",
			"[timestamp]:bigint, [ttl]:int, lastname:text, firstname:text, id:uuid", "[4]"},
		{"update with IN ? on a clustering column", "UPDATE testks.test SET data = ? WHERE pk1 = ? AND pk2 = ? AND ck1 = ? AND ck2 IN ?",
			"data:int, pk1:int, pk2:int, ck1:int, in(ck2):list<int>", "[1 2]"},
		{"delete with timestamp", "DELETE FROM cycling.cyclist_name USING TIMESTAMP ? WHERE id = ?",
			"[timestamp]:bigint, id:uuid", "[1]"},
		{"delete with IN ? on the partition key", "DELETE lastname FROM cycling.cyclist_name WHERE id IN ?",
			"in(id):list<uuid>", "[]"},
		{"batch", "BEGIN BATCH USING TIMESTAMP ? INSERT INTO cycling.cyclist_name (id, lastname) VALUES (?, ?); UPDATE cycling.cyclist_name SET firstname = ? WHERE id = ?; APPLY BATCH",
			"[timestamp]:bigint, id:uuid, lastname:text, firstname:text, id:uuid", "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			md := mustPrepare(t, "", tt.cql).Meta()
			if got := specs(md.Variables); got != tt.vars {
				t.Errorf("variables:\n got %s\nwant %s", got, tt.vars)
			}
			if got := fmt.Sprint(md.PKIndexes); got != tt.pk {
				t.Errorf("pk_indexes = %s, want %s", got, tt.pk)
			}
		})
	}

	// Variables of a statement on one table name that table.
	md := mustPrepare(t, "", "INSERT INTO testks.kv (k, v) VALUES (?, ?) USING TTL ?").Meta()
	for _, v := range md.Variables {
		if v.Keyspace != "testks" || v.Table != "kv" {
			t.Errorf("variable %s belongs to %s.%s", v.Name, v.Keyspace, v.Table)
		}
	}
	// A write in a batch keeps no pk_indexes of its own.
	b := mustPrepare(t, "", "BEGIN BATCH INSERT INTO testks.kv (k) VALUES (?) APPLY BATCH").(*Batch)
	if len(b.Writes) != 1 || b.Writes[0].PKIndexes != nil {
		t.Errorf("batch writes = %+v", b.Writes)
	}
}

// quotedIdent matches a double-quoted SQL identifier.
var quotedIdent = regexp.MustCompile(`"(?:[^"]|"")*"`)

// checkSQL checks that sql numbers its placeholders $1..$n in order, has one
// Param per placeholder, and holds no literal value nor squirrel
// placeholder outside identifiers.
func checkSQL(t *testing.T, sql string, params []Param) {
	t.Helper()
	if sql == "" {
		t.Fatalf("no SQL")
	}
	bare := quotedIdent.ReplaceAllString(sql, `""`)
	// The literals the planner writes itself: the empty value, and the
	// marker of a value read from an exact companion.
	bare = strings.ReplaceAll(bare, "''::bytea", "")
	bare = strings.ReplaceAll(bare, `'\xffffffffff'::bytea`, "")
	ms := regexp.MustCompile(`\$(\d+)`).FindAllStringSubmatch(bare, -1)
	for i, m := range ms {
		if m[1] != strconv.Itoa(i+1) {
			t.Errorf("placeholder %d is $%s in %s", i+1, m[1], sql)
			break
		}
	}
	if len(ms) != len(params) {
		t.Errorf("%d placeholders but %d params in %s", len(ms), len(params), sql)
	}
	if strings.ContainsAny(bare, "?'") {
		t.Errorf("'?' or a quoted literal outside identifiers in %s", sql)
	}
}

// paramAt returns the parameter whose placeholder follows fragment in sql.
func paramAt(t *testing.T, sql string, params []Param, fragment string) Param {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(fragment) + `\$(\d+)`).FindStringSubmatch(sql)
	if m == nil {
		t.Fatalf("%q not followed by a placeholder in %s", fragment, sql)
	}
	n, _ := strconv.Atoi(m[1])
	return params[n-1]
}

func TestPlanSQLKeepsValuesOut(t *testing.T) {
	const last = `O'Brien'); DROP TABLE cycling.cyclist_name; --`
	const first = ` a'b $1 ? ?? ; "x" -- `
	cql := `INSERT INTO cycling.cyclist_name (id, lastname, firstname) VALUES (41d01b63-244e-435d-bd6d-5dc8a0addb8c, ` +
		`'O''Brien''); DROP TABLE cycling.cyclist_name; --', $$` + first + `$$)`
	w := mustWrite(t, "", cql)
	checkSQL(t, w.SQL, w.Params)
	for _, bad := range []string{"DROP", "Brien", "a'b", `"x"`, "41d01b63", "--"} {
		if strings.Contains(w.SQL, bad) {
			t.Errorf("SQL holds %q: %s", bad, w.SQL)
		}
	}
	got := map[string]string{}
	for _, p := range w.Params {
		if p.Kind == ParamValue {
			got[p.Column.Name] = string(p.Value.Const)
		}
	}
	if got["lastname"] != last || got["firstname"] != first {
		t.Errorf("value params = %q", got)
	}
	if string(w.Keys[0].Values[0].Const) != string([]byte{0x41, 0xd0, 0x1b, 0x63, 0x24, 0x4e, 0x43, 0x5d, 0xbd, 0x6d, 0x5d, 0xc8, 0xa0, 0xad, 0xdb, 0x8c}) {
		t.Errorf("key = %x", w.Keys[0].Values[0].Const)
	}
	if p := paramAt(t, w.SQL, w.Params, "VALUES ("); p.Kind != ParamToken {
		t.Errorf("first value is %+v, want the token", p)
	}

	// A constant in WHERE travels as a parameter too.
	s := mustSelect(t, "", "SELECT * FROM cycling.cyclist_category WHERE category = 'best' AND points > 424242 AND lastname = 'Zed' ALLOW FILTERING")
	for i, sql := range []string{s.SQL, s.ScanSQL} {
		params := [][]Param{s.Params, s.ScanParams}[i]
		checkSQL(t, sql, params)
		for _, bad := range []string{"best", "424242", "Zed"} {
			if strings.Contains(sql, bad) {
				t.Errorf("SQL holds %q: %s", bad, sql)
			}
		}
		if p := paramAt(t, sql, params, `"points" > `); p.Kind != ParamValue || p.Column.Name != "points" ||
			hex.EncodeToString(p.Value.Const) != "00067932" {
			t.Errorf("slice param = %+v", p)
		}
		if p := paramAt(t, sql, params, `r."lastname" = `); p.Kind != ParamValue || string(p.Value.Const) != "Zed" {
			t.Errorf("filter param = %+v", p)
		}
	}
	// The partition key is filled in from the plan's Keys at execution.
	if p := paramAt(t, s.SQL, s.Params, `"category" = `); p.Kind != ParamKey ||
		string(s.Keys[p.Key].Values[0].Const) != "best" {
		t.Errorf("key param = %+v", p)
	}
}

func TestPlanSQLQuotesNames(t *testing.T) {
	tests := []string{
		`INSERT INTO testks.odd ("K?ey", "c""q", "wh?at ""x""", v) VALUES (?, ?, ?, ?) USING TTL 10`,
		`INSERT INTO testks.odd ("K?ey", "c""q") VALUES ('?', 1)`,
		`UPDATE testks.odd SET "wh?at ""x""" = ?, v = 1 WHERE "K?ey" = ? AND "c""q" IN ?`,
		`DELETE "wh?at ""x""" FROM testks.odd WHERE "K?ey" = ? AND "c""q" = ?`,
		`DELETE FROM testks.odd WHERE "K?ey" = ? AND "c""q" = ?`,
		`SELECT "wh?at ""x""", writetime("wh?at ""x"""), ttl(v), token("K?ey") FROM testks.odd WHERE "K?ey" = ? AND "c""q" > ? AND "c""q" <= ? LIMIT ?`,
		`SELECT * FROM testks.odd WHERE "wh?at ""x""" = ? ALLOW FILTERING`,
		`SELECT * FROM testks.odd WHERE "K?ey" IN ('a', 'b') AND "c""q" IN ? AND v = 1 ALLOW FILTERING`,
	}
	for _, cql := range tests {
		t.Run(cql, func(t *testing.T) {
			var sqls []string
			var params [][]Param
			switch p := mustPrepare(t, "", cql).(type) {
			case *Select:
				sqls, params = []string{p.SQL, p.ScanSQL}, [][]Param{p.Params, p.ScanParams}
			case *Write:
				sqls, params = []string{p.SQL}, [][]Param{p.Params}
			}
			for i, sql := range sqls {
				checkSQL(t, sql, params[i])
				if strings.Contains(sql, "??") {
					t.Errorf("doubled question mark in %s", sql)
				}
				if !strings.Contains(sql, `"testks"."odd"`) || !strings.Contains(sql, `"K?ey"`) || !strings.Contains(sql, `"c""q"`) {
					t.Errorf("names not quoted in %s", sql)
				}
				// Every quoted identifier names a column of the table or a
				// bookkeeping column.
				for _, id := range quotedIdent.FindAllString(sql, -1) {
					name := strings.ReplaceAll(id[1:len(id)-1], `""`, `"`)
					for _, suffix := range []string{"$wt", "$exp", "$empty", "$ord", "$exact", "$deletions", "$lo", "$hi", "$wins"} {
						name = strings.TrimSuffix(name, suffix)
					}
					switch name {
					case "testks", "odd", "K?ey", `c"q`, `wh?at "x"`, "v", pgschema.TokenColumn,
						pgschema.RowWritetimeColumn, pgschema.RowExpiryColumn, pgschema.DeletedColumn,
						pgschema.PrefixColumn, pgschema.LoInclColumn, pgschema.HiInclColumn, pgschema.DeletionColumn(0, ""):
					default:
						t.Errorf("unexpected identifier %s in %s", id, sql)
					}
				}
			}
		})
	}
}

func TestPlanSQLOrder(t *testing.T) {
	tests := []struct {
		cql, order string
	}{
		{"SELECT * FROM cycling.cyclist_category WHERE category = ?",
			` ORDER BY r."_token", r."category", r."points" DESC`},
		{"SELECT * FROM cycling.cyclist_category LIMIT 10",
			` ORDER BY r."_token", r."category", r."points" DESC LIMIT $`},
		{"SELECT data FROM testks.test WHERE pk1 = 1 AND pk2 = 2 AND ck1 > 1",
			` ORDER BY r."_token", r."pk1", r."pk2", r."ck1", r."ck2"`},
		{"SELECT * FROM cycling.rank_by_year_and_name",
			` ORDER BY r."_token", r."race_year", r."race_name", r."rank"`},
		{"SELECT * FROM cycling.cyclist_name",
			` ORDER BY r."_token", r."id"`},
		{`SELECT v FROM testks.odd`,
			` ORDER BY r."_token", r."K?ey", r."c""q" DESC`},
	}
	for _, tt := range tests {
		t.Run(tt.cql, func(t *testing.T) {
			s := mustSelect(t, "", tt.cql)
			for _, sql := range []string{s.SQL, s.ScanSQL} {
				i := strings.Index(sql, " ORDER BY ")
				if i < 0 || !strings.HasPrefix(sql[i:], tt.order) {
					t.Errorf("SQL does not end in %q: %s", tt.order, sql)
				}
			}
		})
	}
}

func TestPlanSQLParams(t *testing.T) {
	s := mustSelect(t, "", "SELECT lastname FROM cycling.cyclist_name WHERE id = ? LIMIT ?")
	checkSQL(t, s.SQL, s.Params)
	checkSQL(t, s.ScanSQL, s.ScanParams)
	// One partition: the token and each partition key column.
	if p := paramAt(t, s.SQL, s.Params, `"_token" = `); p.Kind != ParamToken {
		t.Errorf("token param = %+v", p)
	}
	if p := paramAt(t, s.SQL, s.Params, `"id" = `); p.Kind != ParamKey || p.Key != 0 || p.Column.Name != "id" {
		t.Errorf("key param = %+v", p)
	}
	// One token range, (start, end].
	if p := paramAt(t, s.ScanSQL, s.ScanParams, `"_token" > `); p.Kind != ParamRangeStart {
		t.Errorf("range start param = %+v", p)
	}
	if p := paramAt(t, s.ScanSQL, s.ScanParams, `"_token" <= `); p.Kind != ParamRangeEnd {
		t.Errorf("range end param = %+v", p)
	}
	if p := paramAt(t, s.ScanSQL, s.ScanParams, "LIMIT "); p.Kind != ParamLimit ||
		!strings.HasSuffix(s.ScanSQL, "LIMIT $"+strconv.Itoa(len(s.ScanParams))) {
		t.Errorf("limit param = %+v in %s", p, s.ScanSQL)
	}
	// A partition of this table is one row, which needs no order and no
	// limit.
	if strings.Contains(s.SQL, " LIMIT ") || strings.Contains(s.SQL, " ORDER BY ") {
		t.Errorf("the read of a one-row partition orders or limits: %s", s.SQL)
	}
	if s.Limit == nil || s.Limit.Marker != 1 {
		t.Errorf("limit = %+v", s.Limit)
	}

	// The key of a write is a parameter per key column, after the token.
	w := mustWrite(t, "", "UPDATE testks.test USING TTL ? SET data = ? WHERE pk1 = ? AND pk2 = ? AND ck1 = ? AND ck2 = ?")
	checkSQL(t, w.SQL, w.Params)
	var keys []string
	for _, p := range w.Params {
		if p.Kind == ParamKey {
			keys = append(keys, fmt.Sprintf("%d:%s", p.Key, p.Column.Name))
		}
	}
	// The key's columns, then the clustering and partition key again to
	// look up recorded deletions covering the row.
	if got := strings.Join(keys, " "); got != "0:pk1 1:pk2 2:ck1 3:ck2 2:ck1 3:ck2 0:pk1 1:pk2" {
		t.Errorf("key params = %s", got)
	}
	if w.TTL == nil || w.TTL.Marker != 0 {
		t.Errorf("ttl = %+v", w.TTL)
	}
}
