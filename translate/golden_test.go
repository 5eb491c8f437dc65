package translate

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/translate/cqlfunc"
)

// The golden files in testdata/*.json pin what the planner makes of CQL
// statements: each file is a list of cases whose input (name, session
// keyspace, CQL) is written by hand and whose output (the plan rendered as
// data, or the exact error) is regenerated with
//
//	go test ./translate -run TestGolden -update
//
// and reviewed as a diff. Without -update the test fails, with a diff per
// case, when a plan or an error changes.
//
// In the rendering, ?N is bind variable N, @N is computed value N (after
// the variables, see Metadata.Computed), and constants are shown in
// Cassandra's JSON form (strings single-quoted). Parameters read "$N kind
// ...", in placeholder order. SQL shows plain lower-case identifiers
// without their double quotes, which JSON would escape.
var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata with the current plans")

// goldenCase is one statement of a golden file: the input, then the plan or
// the error the planner answers (or the panic it raised).
type goldenCase struct {
	Name     string    `json:"name"`
	Keyspace string    `json:"keyspace,omitempty"`
	CQL      string    `json:"cql"`
	Plan     *planOut  `json:"plan,omitempty"`
	Error    *errorOut `json:"error,omitempty"`
	Panic    string    `json:"panic,omitempty"`
}

// errorOut is an error: its CQL error code by name, and its message.
type errorOut struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// condOut is the IF clause of a conditional write.
type condOut struct {
	IfNotExists bool     `json:"if_not_exists,omitempty"`
	IfExists    bool     `json:"if_exists,omitempty"`
	Conds       []string `json:"conds,omitempty"`
	Result      []string `json:"result,omitempty"`
	Read        *planOut `json:"read,omitempty"`
}

// planOut is a plan rendered as data: only the fields of its kind are set.
type planOut struct {
	Kind  string `json:"kind"`
	Table string `json:"table,omitempty"`

	// Metadata.
	Variables []string `json:"variables,omitempty"`
	PKIndexes []uint16 `json:"pk_indexes,omitempty"`
	Computed  []string `json:"computed,omitempty"`
	Result    []string `json:"result,omitempty"`

	// Select.
	Route          string   `json:"route,omitempty"`
	Slots          []string `json:"slots,omitempty"`
	Outputs        []string `json:"outputs,omitempty"`
	JSONNames      []string `json:"json_names,omitempty"`
	Aggregate      bool     `json:"aggregate,omitempty"`
	GroupBy        []string `json:"group_by,omitempty"`
	Keys           []string `json:"keys,omitempty"`
	Filters        []string `json:"filters,omitempty"`
	TokenStart     string   `json:"token_start,omitempty"`
	TokenEnd       string   `json:"token_end,omitempty"`
	Reversed       bool     `json:"reversed,omitempty"`
	Sort           []string `json:"sort,omitempty"`
	PartitionSlots []string `json:"partition_slots,omitempty"`
	PerPartition   bool     `json:"per_partition,omitempty"`
	Position       []string `json:"position,omitempty"`
	Limit          string   `json:"limit,omitempty"`
	PerPartLimit   string   `json:"per_partition_limit,omitempty"`

	// Write.
	WriteKind  string   `json:"write_kind,omitempty"`
	Slice      []string `json:"slice,omitempty"`
	Timestamp  string   `json:"timestamp,omitempty"`
	TTL        string   `json:"ttl,omitempty"`
	Counter    bool     `json:"counter,omitempty"`
	JSON       bool     `json:"json,omitempty"`
	Conditions *condOut `json:"conditions,omitempty"`

	// The SQL of a select (one partition, then one token range) or write.
	SQL        string   `json:"sql,omitempty"`
	Params     []string `json:"params,omitempty"`
	ScanSQL    string   `json:"scan_sql,omitempty"`
	ScanParams []string `json:"scan_params,omitempty"`
	// The SQL resuming a page after a position, in a partition and in a
	// token range.
	ResumeSQL        string   `json:"resume_sql,omitempty"`
	ResumeParams     []string `json:"resume_params,omitempty"`
	ResumeScanSQL    string   `json:"resume_scan_sql,omitempty"`
	ResumeScanParams []string `json:"resume_scan_params,omitempty"`

	// Batch.
	BatchKind string     `json:"batch_kind,omitempty"`
	Writes    []*planOut `json:"writes,omitempty"`

	// Use, schema changes, describe.
	Keyspace     string   `json:"keyspace,omitempty"`
	Statement    string   `json:"statement,omitempty"`
	Change       string   `json:"change,omitempty"`
	Target       string   `json:"target,omitempty"`
	Name         string   `json:"name,omitempty"`
	NewKeyspace  []string `json:"new_keyspace,omitempty"`
	OldTable     string   `json:"old_table,omitempty"`
	NewTable     []string `json:"new_table,omitempty"`
	Columns      []string `json:"columns,omitempty"`
	Renames      []string `json:"renames,omitempty"`
	NewType      []string `json:"new_type,omitempty"`
	FieldRenames []string `json:"field_renames,omitempty"`
	TypeUsers    []string `json:"type_users,omitempty"`
	UserTables   []string `json:"user_tables,omitempty"`
	Index        string   `json:"index,omitempty"`
	IndexColumn  string   `json:"index_column,omitempty"`
	Describe     string   `json:"describe,omitempty"`
	Flags        []string `json:"flags,omitempty"`
}

// goldenDDL defines the golden tests' own keyspace, shop, which the
// keyspaces of testSchema join: user types, collections, frozen and
// non-frozen UDTs, a tuple, every scalar type, static columns, a composite
// partition key with DESC clustering, counters and secondary indexes.
// Tables are built straight from their CREATE TABLE by goldenTable, so
// that the schema does not depend on how the planner plans CREATE TABLE
// (which ddl.json pins, refusals included); types and indexes go through
// the planner.
var goldenDDL = []string{
	"CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
	"CREATE TYPE shop.address (street text, city text, zip int)",
	"CREATE TYPE shop.contact (name text, addr frozen<address>, phones list<text>)",
	"CREATE TYPE shop.point (x int, y int)",
	`CREATE TABLE shop.users (id uuid PRIMARY KEY, name text, age int, email text, emails set<text>,
		tags list<text>, prefs map<text, int>, addr frozen<address>, home address, scores frozen<list<int>>,
		coords tuple<double, double>, contact frozen<contact>, "Nick" text)`,
	`CREATE TABLE shop.types (k int PRIMARY KEY, a ascii, bi bigint, b blob, bo boolean, d date, de decimal,
		db double, du duration, fl float, ip inet, si smallint, tm time, ts timestamp, tu timeuuid,
		ti tinyint, u uuid, vc varchar, vi varint, tx text, loc frozen<point>)`,
	`CREATE TABLE shop.events (tenant text, day date, ts timestamp, seq int, payload text, note text STATIC,
		total int STATIC, PRIMARY KEY ((tenant, day), ts, seq)) WITH CLUSTERING ORDER BY (ts DESC, seq ASC)`,
	"CREATE TABLE shop.hits (page text, day int, views counter, clicks counter, PRIMARY KEY (page, day))",
	`CREATE TABLE shop.items (cat text, id int, sub int, name text, price decimal, qty int, tags set<text>,
		attrs map<text, text>, PRIMARY KEY (cat, id, sub))`,
	"CREATE INDEX items_qty ON shop.items (qty)",
	"CREATE INDEX ON shop.items (values(tags))",
	"CREATE INDEX items_attr_keys ON shop.items (KEYS(attrs))",
	"CREATE INDEX items_attr_entries ON shop.items (ENTRIES(attrs))",
	"CREATE INDEX users_email ON shop.users (email)",
	`CREATE TABLE shop.log (host inet, at timeuuid, tag frozen<list<text>>, msg text,
		PRIMARY KEY (host, at, tag)) WITH CLUSTERING ORDER BY (at DESC, tag ASC)`,
	"CREATE TABLE shop.durations (k int PRIMARY KEY, d duration, l frozen<list<duration>>, t tuple<int, duration>)",
}

// goldenSchema returns testSchema's keyspaces plus those of goldenDDL.
func goldenSchema() (*pgschema.Schema, error) {
	user := map[string]*pgschema.Keyspace{}
	for _, k := range testSchema().Keyspaces() {
		if !k.Virtual {
			user[k.Name] = k
		}
	}
	schema := pgschema.NewSchema([16]byte{2}, user)
	for i, cql := range goldenDDL {
		parsed, err := Parse(cql)
		if err != nil {
			return nil, fmt.Errorf("golden schema statement %d: %w", i, err)
		}
		if s, ok := parsed.Statement.(*CreateTableStmt); ok {
			k := schema.Keyspace(s.Table.Keyspace)
			t, err := goldenTable(k, s, byte(i))
			if err != nil {
				return nil, fmt.Errorf("golden schema statement %d: %w", i, err)
			}
			k.Tables[t.Name] = t
			continue
		}
		plan, err := Prepare(parsed, "", schema)
		if err != nil {
			return nil, fmt.Errorf("golden schema statement %d: %w", i, err)
		}
		sc, ok := plan.(*SchemaChange)
		switch {
		case !ok:
			return nil, fmt.Errorf("golden schema statement %d planned as %T", i, plan)
		case sc.NewKeyspace != nil:
			sc.NewKeyspace.Tables, sc.NewKeyspace.Types = map[string]*pgschema.Table{}, map[string]*pgschema.Type{}
			user[sc.NewKeyspace.Name] = sc.NewKeyspace
			schema = pgschema.NewSchema([16]byte{2}, user)
		case sc.NewType != nil:
			schema.Keyspace(sc.Keyspace).Types[sc.Name] = sc.NewType
		case sc.Index != nil:
			sc.OldTable.Indexes = append(sc.OldTable.Indexes, sc.Index)
		default:
			return nil, fmt.Errorf("golden schema statement %d: unexpected change %+v", i, sc)
		}
	}
	return schema, nil
}

// goldenTable builds the table a CREATE TABLE defines, as the planner
// would but without its checks.
func goldenTable(k *pgschema.Keyspace, s *CreateTableStmt, id byte) (*pgschema.Table, error) {
	byName := map[string]*pgschema.Column{}
	var cols []*pgschema.Column
	for _, def := range s.Columns {
		typ, err := resolveType(k, def.Type)
		if err != nil {
			return nil, err
		}
		c := &pgschema.Column{Name: def.Name, Type: typ, Kind: pgschema.Regular, Position: -1}
		if def.Static {
			c.Kind = pgschema.Static
		}
		byName[def.Name], cols = c, append(cols, c)
	}
	for i, n := range s.PartitionKey {
		byName[n].Kind, byName[n].Position = pgschema.PartitionKey, i
	}
	for i, n := range s.Clustering {
		byName[n].Kind, byName[n].Position = pgschema.Clustering, i
	}
	for _, o := range s.ClusteringOrder {
		byName[o.Column].Desc = o.Desc
	}
	return pgschema.NewTable(k.Name, s.Table.Name, [16]byte{0x60, id}, cols, map[string]string{}), nil
}

func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files in testdata (%v)", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			runGoldenFile(t, file)
		})
	}
}

// runGoldenFile plans every case of one file and compares the renderings
// with the file's, or rewrites the file with -update.
func runGoldenFile(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var want []goldenCase
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&want); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	got := make([]goldenCase, len(want))
	seen := map[string]bool{}
	for i, c := range want {
		if c.Name == "" || seen[c.Name] {
			t.Fatalf("%s: case %d has no name, or a name used before (%q)", file, i, c.Name)
		}
		seen[c.Name] = true
		got[i] = runGoldenCase(t, c, true)
		// Planning twice must give the same plan: no map order leaks in.
		if again := runGoldenCase(t, c, false); string(encodeGolden(again)) != string(encodeGolden(got[i])) {
			t.Errorf("%s: planning twice gives different plans:\n%s", c.Name, lineDiff(encodeGolden(got[i]), encodeGolden(again)))
		}
	}
	if *updateGolden {
		if err := os.WriteFile(file, encodeGolden(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	for i := range want {
		w, g := encodeGolden(want[i]), encodeGolden(got[i])
		if !bytes.Equal(w, g) {
			t.Errorf("%s: %s\n%s\n(- golden file, + planner now; run go test ./translate -run TestGolden -update to accept)",
				want[i].Name, want[i].CQL, lineDiff(w, g))
		}
	}
}

// runGoldenCase plans one case's CQL against a fresh golden schema and
// renders the outcome; check also checks the SQL's placeholders.
func runGoldenCase(t *testing.T, c goldenCase, check bool) (out goldenCase) {
	t.Helper()
	out = goldenCase{Name: c.Name, Keyspace: c.Keyspace, CQL: c.CQL}
	schema, err := goldenSchema()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r != nil {
			out.Plan, out.Error, out.Panic = nil, nil, fmt.Sprint(r)
		}
	}()
	parsed, err := Parse(c.CQL)
	var plan Plan
	if err == nil {
		plan, err = Prepare(parsed, c.Keyspace, schema)
	}
	if err != nil {
		out.Error = goldenError(err)
		return out
	}
	out.Plan = renderPlan(plan)
	if check {
		for _, e := range checkPlaceholders(plan) {
			t.Errorf("%s: %s", c.Name, e)
		}
	}
	return out
}

// encodeGolden renders a value as the golden files hold it: indented JSON
// without HTML escaping, ending in a newline.
func encodeGolden(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// goldenError names an error's CQL error code and keeps its message.
func goldenError(err error) *errorOut {
	var (
		syn   *SyntaxError
		inv   *InvalidError
		conf  *ConfigError
		dup   *AlreadyExistsError
		unath *UnauthorizedError
		fail  *cqlfunc.FunctionFailureError
	)
	code := "Server"
	switch {
	case errors.As(err, &syn):
		code = "Syntax"
	case errors.As(err, &inv):
		code = "Invalid"
	case errors.As(err, &conf):
		code = "Config"
	case errors.As(err, &dup):
		code = "AlreadyExists"
	case errors.As(err, &unath):
		code = "Unauthorized"
	case errors.As(err, &fail):
		code = "FunctionFailure"
	}
	return &errorOut{Code: code, Message: err.Error()}
}

// checkPlaceholders checks that each SQL text of a plan numbers its
// placeholders $1..$n in order, one per parameter.
func checkPlaceholders(plan Plan) []string {
	var problems []string
	check := func(sql string, params []Param) {
		if sql == "" {
			return
		}
		bare := quotedIdent.ReplaceAllString(sql, `""`)
		bare = quotedString.ReplaceAllString(bare, `''`)
		n := 0
		for i := strings.IndexByte(bare, '$'); i >= 0; i = strings.IndexByte(bare, '$') {
			j := i + 1
			for j < len(bare) && bare[j] >= '0' && bare[j] <= '9' {
				j++
			}
			if j > i+1 {
				n++
				if bare[i+1:j] != strconv.Itoa(n) {
					problems = append(problems, fmt.Sprintf("placeholder %d is $%s in %s", n, bare[i+1:j], sql))
				}
			}
			bare = bare[j:]
		}
		if n != len(params) {
			problems = append(problems, fmt.Sprintf("%d placeholders but %d parameters in %s", n, len(params), sql))
		}
	}
	var walk func(p Plan)
	walk = func(p Plan) {
		switch x := p.(type) {
		case *Select:
			check(x.SQL, x.Params)
			check(x.ScanSQL, x.ScanParams)
			check(x.ResumeSQL, x.ResumeParams)
			check(x.ResumeScanSQL, x.ResumeScanParams)
		case *Write:
			check(x.SQL, x.Params)
			if x.Conditions != nil && x.Conditions.Read != nil {
				walk(x.Conditions.Read)
			}
		case *Batch:
			for _, w := range x.Writes {
				walk(w)
			}
		}
	}
	walk(plan)
	return problems
}

// plainIdent matches the identifiers readableSQL shows unquoted.
var plainIdent = regexp.MustCompile(`^[a-z_][a-z0-9_$]*$`)

// readableSQL returns sql with plain lower-case identifiers shown without
// their double quotes, which JSON would escape; the others stay quoted.
func readableSQL(sql string) string {
	return quotedIdent.ReplaceAllStringFunc(sql, func(id string) string {
		if name := id[1 : len(id)-1]; plainIdent.MatchString(name) {
			return name
		}
		return id
	})
}

// quotedString matches an SQL string constant.
var quotedString = regexp.MustCompile(`'(?:[^']|'')*'`)

// goldenRenderer renders one plan; nvars tells bind variables (?N) from
// computed values (@N), and table is the plan's table, whose name column
// specifications of its own leave out.
type goldenRenderer struct {
	nvars int
	table *pgschema.Table
}

// renderPlan renders a plan as data.
func renderPlan(plan Plan) *planOut {
	md := plan.Meta()
	r := &goldenRenderer{nvars: len(md.Variables)}
	out := &planOut{}
	switch p := plan.(type) {
	case *Select:
		r.table = p.Table
		r.selectOut(p, out)
	case *Write:
		r.table = p.Table
		r.writeOut(p, out)
	case *Batch:
		out.Kind = "batch"
		out.BatchKind = [...]string{"logged", "unlogged", "counter"}[p.Kind]
		if p.Timestamp != nil {
			out.Timestamp = r.value(*p.Timestamp, pgschema.Scalar(pgschema.Bigint))
		}
		for _, w := range p.Writes {
			wo := &planOut{}
			(&goldenRenderer{nvars: r.nvars, table: w.Table}).writeOut(w, wo)
			out.Writes = append(out.Writes, wo)
		}
	case *Use:
		out.Kind, out.Keyspace = "use", p.Keyspace
	case *Noop:
		out.Kind = "noop"
	case *Truncate:
		out.Kind, out.Table = "truncate", p.Table.QualifiedName()
	case *SchemaChange:
		r.schemaChangeOut(p, out)
	case *Describe:
		out.Kind = "describe"
		out.Describe = describeKindNames[p.Kind]
		out.Keyspace, out.Name = p.Keyspace, p.Name
		for _, f := range []struct {
			on   bool
			name string
		}{{p.Full, "full"}, {p.Only, "only"}, {p.Internals, "internals"}, {p.RangeOwnership, "range_ownership"}} {
			if f.on {
				out.Flags = append(out.Flags, f.name)
			}
		}
	case *Auth:
		out.Kind, out.Statement = "auth", p.String()
	default:
		out.Kind = typeName(plan)
	}
	for _, v := range md.Variables {
		out.Variables = append(out.Variables, r.spec(v))
	}
	out.PKIndexes = md.PKIndexes
	for _, c := range md.Computed {
		out.Computed = append(out.Computed, r.computation(c))
	}
	for _, c := range md.Result {
		out.Result = append(out.Result, r.spec(c))
	}
	return out
}

var describeKindNames = map[DescribeKind]string{
	DescribeSchema: "schema", DescribeKeyspaces: "keyspaces", DescribeKeyspace: "keyspace",
	DescribeTables: "tables", DescribeTable: "table", DescribeTypes: "types", DescribeType: "type",
	DescribeFunctions: "functions", DescribeFunction: "function", DescribeAggregates: "aggregates",
	DescribeAggregate: "aggregate", DescribeIndex: "index", DescribeView: "view",
	DescribeCluster: "cluster", DescribeGeneric: "generic",
}

// typeName is a value's Go type name without package or pointer.
func typeName(v any) string {
	name := fmt.Sprintf("%T", v)
	return name[strings.LastIndexByte(name, '.')+1:]
}

// spec renders a column specification as "name type", followed by its
// keyspace and table when they are not the plan's table.
func (r *goldenRenderer) spec(c ColumnSpec) string {
	s := c.Name + " " + typeString(c.Type)
	if r.table == nil || c.Keyspace != r.table.Keyspace || c.Table != r.table.Name {
		s += " (" + c.Keyspace + "." + c.Table + ")"
	}
	return s
}

func typeString(t *pgschema.Type) string {
	if t == nil {
		return "<no type>"
	}
	return t.String()
}

func colName(c *pgschema.Column) string {
	if c == nil {
		return "<no column>"
	}
	return pgschema.QuoteIdentifier(c.Name)
}

// value renders a value of type t: ?N, @N, null, or the constant in
// Cassandra's JSON form with strings single-quoted (hex when that fails).
func (r *goldenRenderer) value(v Value, t *pgschema.Type) string {
	switch {
	case v.Marker >= r.nvars:
		return "@" + strconv.Itoa(v.Marker-r.nvars)
	case v.Marker >= 0:
		return "?" + strconv.Itoa(v.Marker)
	case v.Const == nil:
		return "null"
	}
	if t != nil {
		// JSON has no NaN nor infinities, which Cassandra writes as null.
		if j, err := pgschema.ToJSON(t, v.Const); err == nil && string(j) != "null" {
			var s string
			if j[0] == '"' && json.Unmarshal(j, &s) == nil {
				return "'" + strings.ReplaceAll(s, "'", "''") + "'"
			}
			return string(j)
		}
	}
	return "0x" + hex.EncodeToString(v.Const)
}

func (r *goldenRenderer) values(vs []Value, t *pgschema.Type) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = r.value(v, t)
	}
	return strings.Join(parts, ", ")
}

// restriction renders a WHERE relation as CQL writes it.
func (r *goldenRenderer) restriction(res Restriction) string {
	switch res.Kind {
	case OnToken:
		return "token " + res.Op.String() + " " + r.values(res.Values, pgschema.Scalar(pgschema.Bigint))
	case OnElement:
		c := res.Column
		return fmt.Sprintf("%s[%s] = %s", colName(c), r.value(res.Key, c.Type.Elem[0]), r.value(res.Values[0], c.Type.Elem[1]))
	case OnTuple:
		names := make([]string, len(res.Columns))
		for i, c := range res.Columns {
			names[i] = colName(c)
		}
		tuple := func(vs []Value) string {
			if len(vs) != len(res.Columns) {
				return r.values(vs, nil)
			}
			parts := make([]string, len(vs))
			for i, v := range vs {
				parts[i] = r.value(v, res.Columns[i].Type)
			}
			return "(" + strings.Join(parts, ", ") + ")"
		}
		lhs := "(" + strings.Join(names, ", ") + ") " + res.Op.String() + " "
		switch {
		case res.Op == OpIN && res.ListMarker:
			return lhs + r.values(res.Values, nil)
		case res.Op == OpEQ && len(res.Tuples) == 1: // a write's =, a list of one
			return lhs + tuple(res.Tuples[0])
		case res.Op == OpIN:
			parts := make([]string, len(res.Tuples))
			for i, tv := range res.Tuples {
				parts[i] = tuple(tv)
			}
			return lhs + "(" + strings.Join(parts, ", ") + ")"
		}
		return lhs + tuple(res.Values)
	}
	c := res.Column
	lhs := colName(c) + " " + res.Op.String() + " "
	switch res.Op {
	case OpIN:
		if res.ListMarker {
			return lhs + r.values(res.Values, nil)
		}
		return lhs + "(" + r.values(res.Values, c.Type) + ")"
	case OpContains:
		return lhs + r.values(res.Values, c.Type.Elem[len(c.Type.Elem)-1])
	case OpContainsKey:
		return lhs + r.values(res.Values, c.Type.Elem[0])
	}
	return lhs + r.values(res.Values, c.Type)
}

func (r *goldenRenderer) restrictions(rs []Restriction) []string {
	var out []string
	for _, res := range rs {
		if res.Kind == OnTuple && res.Columns == nil {
			continue // a column a write's tuple before it restricts
		}
		out = append(out, r.restriction(res))
	}
	return out
}

// slotName renders what a slot fetches.
func slotName(sl Slot) string {
	switch sl.Kind {
	case SlotWritetime:
		return "writetime(" + colName(sl.Column) + ")"
	case SlotTTL:
		return "ttl(" + colName(sl.Column) + ")"
	case SlotToken:
		return "stored token"
	}
	return colName(sl.Column)
}

func slotNames(s *Select, slots []int) []string {
	var out []string
	for _, i := range slots {
		out = append(out, slotName(s.Slots[i]))
	}
	return out
}

// expr renders a selector expression over a select's slots.
func (r *goldenRenderer) expr(s *Select, e Expr) string {
	args := func(es []Expr) string {
		parts := make([]string, len(es))
		for i, a := range es {
			parts[i] = r.expr(s, a)
		}
		return strings.Join(parts, ", ")
	}
	switch x := e.(type) {
	case *SlotRef:
		return slotName(s.Slots[x.Slot])
	case *TokenOf:
		return "token(" + strings.Join(slotNames(s, x.Slots), ", ") + ")"
	case *ConstExpr:
		return r.value(x.Value, x.T)
	case *FieldRef:
		return r.expr(s, x.Arg) + "." + x.Arg.Type().Fields[x.Index]
	case *CallExpr:
		return x.Fn.QualifiedName() + "(" + args(x.Args) + ")"
	case *CastExpr:
		return "cast(" + r.expr(s, x.Arg) + " as " + typeString(x.T) + ")"
	case *AggExpr:
		return x.Agg.QualifiedName() + "(" + args(x.Args) + ")"
	case *ElementRef:
		return r.expr(s, x.Arg) + "[" + r.expr(s, x.Key) + "]"
	}
	return typeName(e)
}

// computation renders a value computed at execution.
func (r *goldenRenderer) computation(c Computation) string {
	switch x := c.(type) {
	case *callValue:
		parts := make([]string, len(x.args))
		for i, a := range x.args {
			var t *pgschema.Type
			if i < len(x.fn.Args) {
				t = x.fn.Args[i]
			}
			parts[i] = r.value(a, t)
		}
		return x.fn.QualifiedName() + "(" + strings.Join(parts, ", ") + ")"
	case *tokenValue:
		return "token(" + r.values(x.args, nil) + ")"
	case *compositeValue:
		elem := func(i int) *pgschema.Type {
			switch x.t.Kind {
			case pgschema.Tuple, pgschema.UDT:
				if i < len(x.t.Elem) {
					return x.t.Elem[i]
				}
				return nil
			}
			return x.t.Elem[0]
		}
		parts := make([]string, len(x.elems))
		for i, v := range x.elems {
			parts[i] = r.value(v, elem(i))
			if x.t.Kind == pgschema.Map && i < len(x.values) {
				parts[i] += ": " + r.value(x.values[i], x.t.Elem[1])
			}
		}
		return typeString(x.t) + " of " + strings.Join(parts, ", ")
	case *jsonRow:
		s := "json row of " + r.value(x.src, pgschema.Scalar(pgschema.Text))
		if x.unset {
			s += " default unset"
		}
		return s
	case *jsonField:
		return "json field " + strconv.Itoa(x.index) + " of " + r.value(x.row, nil)
	}
	return typeName(c)
}

// param renders one SQL parameter, numbered as its placeholder.
func (r *goldenRenderer) param(i int, p Param) string {
	s := "$" + strconv.Itoa(i+1) + " "
	valueType := func() *pgschema.Type {
		if p.Type == nil && p.Column == nil {
			return nil
		}
		return p.ValueType()
	}
	switch p.Kind {
	case ParamNow:
		s += "now"
	case ParamClock:
		s += "clock"
	case ParamToken:
		s += "token"
	case ParamKey:
		s += fmt.Sprintf("key %d %s", p.Key, colName(p.Column))
	case ParamValue:
		s += "value"
		if p.Column != nil {
			s += " " + colName(p.Column)
		}
		if p.Type != nil && (p.Column == nil || !p.Type.Equal(p.Column.Type)) {
			s += " as " + typeString(p.Type)
		}
		s += " = " + r.value(p.Value, valueType())
	case ParamList:
		s += "list " + colName(p.Column)
		if p.ListMarker {
			s += " = " + r.values(p.Values, nil)
		} else {
			s += " = [" + r.values(p.Values, valueType()) + "]"
		}
	case ParamRangeStart:
		s += "range start"
	case ParamRangeEnd:
		s += "range end"
	case ParamLimit:
		s += "limit"
	case ParamAfter:
		s += fmt.Sprintf("after %d %s", p.Key, colName(p.Column))
	case ParamWritetime, ParamExpiry:
		// A cell's write time and expiry are null when its value, a
		// marker or computed value, is unset.
		s += map[ParamKind]string{ParamWritetime: "writetime", ParamExpiry: "expiry"}[p.Kind]
		switch {
		case p.Cell && p.Value.Marker >= 0:
			s += " of cell " + r.value(p.Value, nil)
		case p.Cell:
			s += " of cell"
		}
	default:
		s += fmt.Sprintf("kind %d", p.Kind)
	}
	switch p.Form {
	case FormJSON:
		s += " (json)"
	case FormJSONKey:
		s += " (json key)"
	case FormOrderKey:
		if p.Kind == ParamAfter {
			s += " (order key)"
		}
	case FormExact:
		s += " (exact)"
	}
	if p.Element >= 0 && (p.Kind == ParamValue || p.Kind == ParamList) {
		s += fmt.Sprintf(" (element %d)", p.Element)
	}
	return s
}

func (r *goldenRenderer) params(ps []Param) []string {
	var out []string
	for i, p := range ps {
		out = append(out, r.param(i, p))
	}
	return out
}

var routeNames = map[Route]string{RoutePartitions: "partitions", RouteScan: "scan"}

func (r *goldenRenderer) selectOut(s *Select, out *planOut) {
	out.Kind = "select"
	out.Table = s.Table.QualifiedName()
	out.Route = routeNames[s.Route]
	for _, sl := range s.Slots {
		out.Slots = append(out.Slots, slotName(sl))
	}
	for _, e := range s.Outputs {
		out.Outputs = append(out.Outputs, r.expr(s, e))
	}
	out.JSONNames = s.JSONNames
	out.Aggregate = s.Aggregate
	out.GroupBy = slotNames(s, s.GroupSlots)
	out.Keys = r.restrictions(s.Keys)
	out.Filters = r.restrictions(s.Filters)
	bound := func(b *TokenBound, start bool) string {
		if b == nil {
			return ""
		}
		op := map[bool]string{true: ">", false: "<"}[start]
		if b.Inclusive {
			op += "="
		}
		return op + " " + r.value(b.Value, pgschema.Scalar(pgschema.Bigint))
	}
	out.TokenStart, out.TokenEnd = bound(s.TokenStart, true), bound(s.TokenEnd, false)
	out.Reversed = s.Reversed
	for i, sl := range s.SortSlots {
		out.Sort = append(out.Sort, slotName(s.Slots[sl])+map[bool]string{true: " DESC", false: " ASC"}[s.SortDesc[i]])
	}
	out.PartitionSlots = slotNames(s, s.PartitionSlots)
	out.PerPartition = s.PerPartition
	if s.Pageable {
		// A page's position: the stored token of a scan, the partition
		// key, then the clustering columns it records.
		out.Position = []string{}
		if s.TokenSlot >= 0 {
			out.Position = append(out.Position, slotName(s.Slots[s.TokenSlot]))
		}
		out.Position = append(append(out.Position, slotNames(s, s.PartitionSlots)...), slotNames(s, s.PositionSlots)...)
	}
	if s.Limit != nil {
		out.Limit = r.value(*s.Limit, pgschema.Scalar(pgschema.Int))
	}
	if s.PerPartitionLimit != nil {
		out.PerPartLimit = r.value(*s.PerPartitionLimit, pgschema.Scalar(pgschema.Int))
	}
	out.SQL, out.Params = readableSQL(s.SQL), r.params(s.Params)
	out.ScanSQL, out.ScanParams = readableSQL(s.ScanSQL), r.params(s.ScanParams)
	out.ResumeSQL, out.ResumeParams = readableSQL(s.ResumeSQL), r.params(s.ResumeParams)
	out.ResumeScanSQL, out.ResumeScanParams = readableSQL(s.ResumeScanSQL), r.params(s.ResumeScanParams)
}

var writeKindNames = map[WriteKind]string{WriteUpsert: "upsert", WriteDeleteRow: "delete row", WriteDeleteRange: "delete range"}

func (r *goldenRenderer) writeOut(w *Write, out *planOut) {
	out.Kind = "write"
	out.Table = w.Table.QualifiedName()
	out.WriteKind = writeKindNames[w.Kind]
	out.Keys = r.restrictions(w.Keys)
	out.Slice = r.restrictions(w.Slice)
	if w.Timestamp != nil {
		out.Timestamp = r.value(*w.Timestamp, pgschema.Scalar(pgschema.Bigint))
	}
	if w.TTL != nil {
		out.TTL = r.value(*w.TTL, pgschema.Scalar(pgschema.Int))
	}
	out.Counter, out.JSON = w.Counter, w.JSON
	if c := w.Conditions; c != nil {
		co := &condOut{IfNotExists: c.IfNotExists, IfExists: c.IfExists}
		for _, cond := range c.Conds {
			co.Conds = append(co.Conds, r.cond(cond))
		}
		for _, col := range c.Result {
			co.Result = append(co.Result, colName(col))
		}
		if c.Read != nil {
			co.Read = &planOut{}
			r.selectOut(c.Read, co.Read)
			for _, spec := range c.Read.Result {
				co.Read.Result = append(co.Read.Result, r.spec(spec))
			}
		}
		out.Conditions = co
	}
	out.SQL, out.Params = readableSQL(w.SQL), r.params(w.Params)
	out.PKIndexes = w.PKIndexes
}

// cond renders one IF condition.
func (r *goldenRenderer) cond(c Cond) string {
	lhs := colName(c.Column)
	switch {
	case c.Key != nil:
		keyType := pgschema.Scalar(pgschema.Int)
		if c.Column.Type.Kind == pgschema.Map {
			keyType = c.Column.Type.Elem[0]
		}
		lhs += "[" + r.value(*c.Key, keyType) + "]"
	case c.Field >= 0:
		lhs += "." + c.Column.Type.Fields[c.Field]
	}
	lhs += " " + c.Op.String() + " "
	switch {
	case c.Op == OpIN && c.ListMarker:
		return lhs + r.values(c.Values, nil)
	case c.Op == OpIN:
		return lhs + "(" + r.values(c.Values, c.Type) + ")"
	}
	return lhs + r.values(c.Values, c.Type)
}

func (r *goldenRenderer) schemaChangeOut(s *SchemaChange, out *planOut) {
	out.Kind = "schema change"
	out.Statement = typeName(s.Statement)
	out.Change, out.Target, out.Keyspace, out.Name = s.Change, s.Target, s.Keyspace, s.Name
	lines := func(text string) []string { return strings.Split(strings.TrimRight(text, "\n"), "\n") }
	if s.NewKeyspace != nil {
		out.NewKeyspace = lines(s.NewKeyspace.CreateStatement())
	}
	if s.OldTable != nil {
		out.OldTable = s.OldTable.QualifiedName()
	}
	if s.NewTable != nil {
		out.NewTable = lines(s.NewTable.CreateStatement())
	}
	for _, c := range s.Columns {
		out.Columns = append(out.Columns, colName(c)+" "+typeString(c.Type)+" "+c.Kind.String())
	}
	for old, c := range s.Renames {
		out.Renames = append(out.Renames, pgschema.QuoteIdentifier(old)+" -> "+colName(c))
	}
	sort.Strings(out.Renames)
	if s.NewType != nil {
		out.NewType = lines(s.NewType.CreateStatement())
	}
	for old, n := range s.FieldRenames {
		out.FieldRenames = append(out.FieldRenames, old+" -> "+n)
	}
	sort.Strings(out.FieldRenames)
	for _, c := range s.TypeUsers {
		out.TypeUsers = append(out.TypeUsers, colName(c))
	}
	for _, t := range s.UserTables {
		out.UserTables = append(out.UserTables, t.QualifiedName())
	}
	if idx := s.Index; idx != nil {
		keys := make([]string, 0, len(idx.Options))
		for k := range idx.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		opts := make([]string, len(keys))
		for i, k := range keys {
			opts[i] = k + "=" + idx.Options[k]
		}
		out.Index = idx.Name + " " + idx.Kind + " {" + strings.Join(opts, ", ") + "}"
	}
	if s.IndexColumn != nil {
		out.IndexColumn = colName(s.IndexColumn)
	}
}

// lineDiff renders the differences between two texts line by line: "-"
// for lines only in a, "+" for lines only in b, with two lines of context.
func lineDiff(a, b []byte) string {
	x := strings.Split(strings.TrimRight(string(a), "\n"), "\n")
	y := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	// lcs[i][j] is the length of the longest common subsequence of x[i:]
	// and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		mark byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			lines = append(lines, line{' ', x[i]})
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', x[i]})
			i++
		default:
			lines = append(lines, line{'+', y[j]})
			j++
		}
	}
	const context = 2
	var b2 strings.Builder
	lastShown := -1
	for k, l := range lines {
		near := false
		for d := -context; d <= context; d++ {
			if n := k + d; n >= 0 && n < len(lines) && lines[n].mark != ' ' {
				near = true
			}
		}
		if !near {
			continue
		}
		if lastShown >= 0 && k > lastShown+1 {
			b2.WriteString("  ...\n")
		}
		b2.WriteByte(l.mark)
		b2.WriteString(" " + l.text + "\n")
		lastShown = k
	}
	return b2.String()
}
