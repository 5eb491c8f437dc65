package webui

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/cqlpg/cqlpg/pgschema"
	"github.com/cqlpg/cqlpg/pgschema/cqltext"
	"github.com/cqlpg/cqlpg/sharding"
	"github.com/cqlpg/cqlpg/translate"
)

// The table builder (/ui/design) shows a CREATE TABLE before it is made:
// the Postgres DDL cqlpg would run, where sample rows' partitions would
// live on the live ring under a chosen replication, the rows of each
// partition in the order a read returns them, how partitions and bytes
// spread over the shards, and which queries the key allows, with
// Cassandra's texts for those it refuses. It creates nothing: the table
// is planned against a schema of its own, with the one keyspace it needs.

// designLimit bounds the rows the page places, typed or generated.
const designLimit = 10000

// designPage is the table builder's view.
type designPage struct {
	// Picked are the columns of the picker: the table built from them
	// when the form gives no CREATE TABLE.
	Picked                       []designColumn
	Roles                        []string
	Name                         string
	DDL, Rows, Queries, Generate string
	RF                           int
	Count                        int
	// Error says why the table or its rows could not be used.
	Error string
	// What follows is set once the table is planned.
	Table       *pgschema.Table
	PostgresDDL []string
	Replication string
	Partitions  []designPartition
	// More counts the partitions placed but not listed.
	More    int
	Shards  []designShard
	Checks  []designQuery
	Columns []string
}

// designPartition is a sample partition: its key, token, range, replicas
// and rows in read order.
type designPartition struct {
	Key      string
	Token    int64
	Range    *uiRange
	Replicas []*uiShard
	Rows     [][]string
	Bytes    int
}

// designShard is the share of the sample one shard would hold.
type designShard struct {
	*uiShard
	Partitions, Rows, Bytes int
	// Bar is the shard's share of the largest shard's bytes, in percent.
	Bar float64
}

// designQuery is a query checked against the designed key.
type designQuery struct {
	CQL     string
	Allowed bool
	Route   string
	Error   string
	// Seed marks the example shapes the page adds.
	Seed bool
}

// designColumn is a row of the column picker: a name, a type and a role
// (partition, clustering asc, clustering desc, or regular).
type designColumn struct {
	Name, Type, Role string
}

// pickerRows is how many column rows the picker offers.
const pickerRows = 8

// designRoles are the picker's roles, in the order its menus list them.
var designRoles = []string{"regular", "partition", "clustering asc", "clustering desc"}

// pickedDDL writes the CREATE TABLE of the picked columns: the partition
// key and clustering columns in the order picked.
func pickedDDL(table string, cols []designColumn) (string, error) {
	var defs, pk, ck, order []string
	for _, c := range cols {
		if c.Name == "" {
			continue
		}
		name := pgschema.QuoteIdentifier(c.Name)
		defs = append(defs, name+" "+c.Type)
		switch c.Role {
		case "partition":
			pk = append(pk, name)
		case "clustering asc", "clustering desc":
			ck = append(ck, name)
			order = append(order, name+" "+strings.ToUpper(strings.TrimPrefix(c.Role, "clustering ")))
		}
	}
	if len(pk) == 0 {
		return "", errors.New("mark at least one column as the partition key")
	}
	ddl := fmt.Sprintf("CREATE TABLE %s (%s, PRIMARY KEY ((%s)", table, strings.Join(defs, ", "), strings.Join(pk, ", "))
	for _, c := range ck {
		ddl += ", " + c
	}
	ddl += "))"
	if len(order) > 0 {
		ddl += " WITH CLUSTERING ORDER BY (" + strings.Join(order, ", ") + ")"
	}
	return ddl, nil
}

// designView builds the table builder's page from its form.
func (q *uiRequest) designView() (any, error) {
	form := q.r.Form
	if err := q.r.ParseForm(); err != nil {
		return nil, &uiBadRequest{"the form could not be read: " + err.Error()}
	}
	form = q.r.Form
	page := &designPage{DDL: form.Get("ddl"), Rows: form.Get("rows"), Queries: form.Get("queries"), Generate: form.Get("generate"), RF: 1,
		Roles: designRoles}
	if rf, err := strconv.Atoi(form.Get("rf")); err == nil && rf > 0 && rf <= 9 {
		page.RF = rf
	}
	names, types, roles := form["col"], form["type"], form["role"]
	page.Name = cmp.Or(form.Get("name"), "design.t")
	for i := range pickerRows {
		c := designColumn{Role: "regular"}
		if i < len(names) && i < len(types) && i < len(roles) {
			c = designColumn{Name: strings.TrimSpace(names[i]), Type: strings.TrimSpace(types[i]), Role: roles[i]}
		}
		page.Picked = append(page.Picked, c)
	}
	if page.DDL == "" && slices.ContainsFunc(page.Picked, func(c designColumn) bool { return c.Name != "" }) {
		ddl, err := pickedDDL(page.Name, page.Picked)
		if err != nil {
			page.Error = err.Error()
			return page, nil
		}
		page.DDL = ddl
	}
	if page.DDL == "" {
		page.DDL = designExample
		return page, nil
	}
	t, schema, err := q.designTable(page)
	if err != nil {
		page.Error = err.Error()
		return page, nil
	}
	page.Table = t
	// The table, its key index in clustering order and its companions;
	// the generated functions and triggers are left to the table page.
	for _, stmt := range t.CreateSQL() {
		if !strings.HasPrefix(stmt, "CREATE OR REPLACE ") && !strings.HasPrefix(stmt, "COMMENT ON FUNCTION") {
			page.PostgresDDL = append(page.PostgresDDL, stmt)
		}
	}
	for _, c := range t.Columns {
		page.Columns = append(page.Columns, c.Name)
	}
	rows, err := designRows(t, schema, page.Rows, page.Generate)
	if err != nil {
		page.Error = err.Error()
	}
	page.Count = len(rows)
	q.placeRows(page, t, schema, rows)
	page.Checks = designChecks(t, schema, page.Queries)
	return page, nil
}

// designExample is the page's first table: the seeds' example.
const designExample = `CREATE TABLE cycling.cyclist_by_team (
    team text,
    year int,
    name text,
    points int,
    PRIMARY KEY ((team, year), points, name)
) WITH CLUSTERING ORDER BY (points DESC, name ASC)`

// designTable plans the CREATE TABLE of the form against a schema of its
// own: its keyspace (the one named, or design), with the replication
// chosen and, when the keyspace exists, its user types.
func (q *uiRequest) designTable(page *designPage) (*pgschema.Table, *pgschema.Schema, error) {
	parsed, err := translate.Parse(page.DDL)
	if err != nil {
		return nil, nil, err
	}
	ct, ok := parsed.Statement.(*translate.CreateTableStmt)
	if !ok {
		return nil, nil, errors.New("the design takes a CREATE TABLE statement")
	}
	ks := cmp.Or(ct.Table.Keyspace, "design")
	rep := sharding.Replication{Class: sharding.SimpleStrategyClass, Factor: page.RF}
	page.Replication = rep.String()
	k := &pgschema.Keyspace{Name: ks, Replication: rep, DurableWrites: true, PGSchema: pgschema.PGSchemaName(ks),
		Tables: map[string]*pgschema.Table{}, Types: map[string]*pgschema.Type{}}
	if have := q.schema.Keyspace(ks); have != nil {
		k.Types = have.Types
	}
	schema := pgschema.NewSchema([16]byte{}, map[string]*pgschema.Keyspace{ks: k})
	plan, err := translate.Prepare(parsed, ks, schema)
	if err != nil {
		return nil, nil, err
	}
	change, ok := plan.(*translate.SchemaChange)
	if !ok || change.NewTable == nil {
		return nil, nil, errors.New("the statement makes no table")
	}
	t := change.NewTable
	k.Tables[t.Name] = t
	return t, schema, nil
}

// designRows reads the sample rows: INSERT statements, CSV with a header
// of column names, or rows generated as spec says ("N" rows, then
// "column distinct [skewed]" lines).
func designRows(t *pgschema.Table, schema *pgschema.Schema, text, spec string) ([][][]byte, error) {
	if strings.TrimSpace(spec) != "" {
		return generateRows(t, spec)
	}
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	if first, _, _ := strings.Cut(strings.TrimSpace(text), " "); strings.EqualFold(first, "INSERT") {
		return insertedRows(t, schema, text)
	}
	r := csv.NewReader(strings.NewReader(text))
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("sample rows: %v", err)
	}
	cols := make([]*pgschema.Column, len(header))
	for i, h := range header {
		if cols[i] = t.Column(strings.TrimSpace(h)); cols[i] == nil {
			return nil, fmt.Errorf("sample rows: no column %q", h)
		}
	}
	var rows [][][]byte
	for line := 2; len(rows) < designLimit; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return rows, fmt.Errorf("sample rows: %v", err)
		}
		row := make([][]byte, len(t.Columns))
		for i, c := range cols {
			if i >= len(rec) {
				break
			}
			v, err := cqltext.Parse(c.Type, rec[i])
			if err != nil {
				return rows, fmt.Errorf("sample rows, line %d, %s: %v", line, c.Name, err)
			}
			row[c.Index] = v
		}
		if err := keyComplete(t, row); err != nil {
			return rows, fmt.Errorf("sample rows, line %d: %v", line, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// insertedRows reads sample rows given as INSERT statements into t, with
// constant values.
func insertedRows(t *pgschema.Table, schema *pgschema.Schema, text string) ([][][]byte, error) {
	stmts, err := translate.ParseScript(text)
	if err == nil && len(stmts) > designLimit {
		stmts = stmts[:designLimit]
	}
	var rows [][][]byte
	for i, parsed := range stmts {
		into, row, err := translate.ConstantRow(parsed, t.Keyspace, schema)
		if err != nil {
			return rows, fmt.Errorf("sample rows, INSERT %d: %v", i+1, err)
		}
		if into != t {
			return rows, fmt.Errorf("sample rows, INSERT %d: it writes %s, not %s", i+1, into.QualifiedName(), t.QualifiedName())
		}
		rows = append(rows, row)
	}
	if err != nil {
		return rows, fmt.Errorf("sample rows, INSERT %d: %v", len(stmts)+1, err)
	}
	return rows, nil
}

// keyComplete reports a row without a value for a key column.
func keyComplete(t *pgschema.Table, row [][]byte) error {
	for _, c := range t.KeyColumns() {
		if row[c.Index] == nil {
			return fmt.Errorf("no value for key column %s", c.Name)
		}
	}
	return nil
}

// generateRows makes rows from a spec: its first line the count, each
// other "column distinct" or "column distinct skewed": the column takes
// that many distinct values, uniformly or, skewed, the first of them in
// half the rows. Columns not named take a distinct value per row.
func generateRows(t *pgschema.Table, spec string) ([][][]byte, error) {
	lines := strings.Split(strings.TrimSpace(spec), "\n")
	n, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || n < 1 {
		return nil, fmt.Errorf("generate: the first line is the number of rows, got %q", lines[0])
	}
	n = min(n, designLimit)
	type colSpec struct {
		distinct int
		skewed   bool
	}
	specs := map[string]colSpec{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if t.Column(f[0]) == nil || len(f) < 2 {
			return nil, fmt.Errorf("generate: %q is not \"column distinct [skewed]\" of a column of the table", l)
		}
		d, err := strconv.Atoi(f[1])
		if err != nil || d < 1 {
			return nil, fmt.Errorf("generate: %q: the count of distinct values is a positive number", l)
		}
		specs[f[0]] = colSpec{distinct: d, skewed: len(f) > 2 && f[2] == "skewed"}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rows := make([][][]byte, 0, n)
	for i := range n {
		row := make([][]byte, len(t.Columns))
		for _, c := range t.Columns {
			s, ok := specs[c.Name]
			pick := i
			if ok {
				pick = rng.IntN(s.distinct)
				if s.skewed && rng.IntN(2) == 0 {
					pick = 0
				}
			}
			v, err := sampleValue(c.Type, pick)
			if err != nil {
				if c.IsKey() {
					return nil, fmt.Errorf("generate: %s: %v", c.Name, err)
				}
				continue
			}
			row[c.Index] = v
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// sampleValue returns the i-th sample value of a scalar type.
func sampleValue(t *pgschema.Type, i int) ([]byte, error) {
	var text string
	switch t.Kind {
	case pgschema.Ascii, pgschema.Text:
		text = "value" + strconv.Itoa(i)
	case pgschema.Int, pgschema.Bigint, pgschema.Smallint, pgschema.Tinyint, pgschema.Varint, pgschema.Counter:
		text = strconv.Itoa(i % 100)
		if t.Kind != pgschema.Tinyint && t.Kind != pgschema.Smallint {
			text = strconv.Itoa(i)
		}
	case pgschema.Float, pgschema.Double, pgschema.Decimal:
		text = strconv.Itoa(i) + ".5"
	case pgschema.Boolean:
		text = strconv.FormatBool(i%2 == 0)
	case pgschema.UUID, pgschema.Timeuuid:
		text = fmt.Sprintf("00000000-0000-1000-8000-%012x", i)
	case pgschema.Timestamp:
		text = strconv.Itoa(1700000000000 + i*1000)
	case pgschema.Date:
		text = fmt.Sprintf("2024-01-%02d", 1+i%28)
	case pgschema.Blob:
		text = fmt.Sprintf("0x%08x", i)
	default:
		return nil, fmt.Errorf("cannot generate values of type %s", t)
	}
	return cqltext.Parse(t, text)
}

// placeRows places the sample rows' partitions on the live ring, under
// the chosen replication, and spreads them over the shards.
func (q *uiRequest) placeRows(page *designPage, t *pgschema.Table, schema *pgschema.Schema, rows [][][]byte) {
	topo := q.b.Cluster().Topology()
	placement := topo.Placement(schema.Keyspace(t.Keyspace).Replication)
	d := ringDrawing{ring: topo.Ring, up: func(i int) bool { return topo.Shards[i].Pool.Alive() }, noArcs: true}
	shards := d.draw().Shards
	page.Shards = make([]designShard, len(shards))
	for i, sh := range shards {
		page.Shards[i].uiShard = sh
	}
	type partition struct {
		key   [][]byte
		token sharding.Token
		rows  [][][]byte
		bytes int
	}
	byKey := map[string]*partition{}
	var order []*partition
	npk := len(t.PartitionKey)
	for _, row := range rows {
		key := make([][]byte, npk)
		for i, c := range t.PartitionKey {
			key[i] = row[c.Index]
		}
		id := string(sharding.AppendKey(nil, key))
		p := byKey[id]
		if p == nil {
			p = &partition{key: key, token: sharding.KeyToken(key)}
			byKey[id] = p
			order = append(order, p)
		}
		p.rows = append(p.rows, row)
		for _, v := range row {
			p.bytes += len(v)
		}
	}
	slices.SortFunc(order, func(a, b *partition) int { return cmp.Compare(a.token, b.token) })
	maxBytes := 1
	for _, p := range order {
		replicas := placement.Replicas(p.token)
		for _, r := range replicas {
			s := &page.Shards[r]
			s.Partitions++
			s.Rows += len(p.rows)
			s.Bytes += p.bytes
			maxBytes = max(maxBytes, s.Bytes)
		}
		if len(page.Partitions) >= 50 {
			page.More++
			continue
		}
		sortRows(t, p.rows)
		dp := designPartition{Token: int64(p.token), Range: rangeDetail(topo.Ring, placement, shards, topo.Ring.RangeIndex(p.token)),
			Bytes: p.bytes}
		var key []string
		for i, c := range t.PartitionKey {
			s, _ := cqltext.Format(c.Type, p.key[i])
			key = append(key, s)
		}
		dp.Key = strings.Join(key, ", ")
		for _, r := range replicas {
			dp.Replicas = append(dp.Replicas, shards[r])
		}
		for _, row := range p.rows {
			cells := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					cells[i] = "null"
					continue
				}
				cells[i], _ = cqltext.Table.Format(t.Columns[i].Type, v)
			}
			dp.Rows = append(dp.Rows, cells)
		}
		page.Partitions = append(page.Partitions, dp)
	}
	for i := range page.Shards {
		page.Shards[i].Bar = 100 * float64(page.Shards[i].Bytes) / float64(maxBytes)
	}
}

// sortRows orders a partition's rows as a read returns them: by their
// clustering columns, each ascending or descending as the table says.
func sortRows(t *pgschema.Table, rows [][][]byte) {
	slices.SortStableFunc(rows, func(a, b [][]byte) int {
		for _, c := range t.Clustering {
			if r := pgschema.Compare(c.Type, a[c.Index], b[c.Index]); r != 0 {
				if c.Desc {
					return -r
				}
				return r
			}
		}
		return 0
	})
}

// designChecks plans the seeds' example query shapes for t, and the
// queries typed (one a line), against the designed schema: each is
// allowed, with the route it takes, or refused with Cassandra's text.
func designChecks(t *pgschema.Table, schema *pgschema.Schema, typed string) []designQuery {
	var out []designQuery
	for _, cql := range exampleQueries(t) {
		out = append(out, checkQuery(t, schema, cql, true))
	}
	for _, line := range strings.Split(typed, "\n") {
		if cql := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), ";")); cql != "" {
			out = append(out, checkQuery(t, schema, cql, false))
		}
	}
	return out
}

// checkQuery plans one query against the designed schema.
func checkQuery(t *pgschema.Table, schema *pgschema.Schema, cql string, seed bool) designQuery {
	q := designQuery{CQL: cql, Seed: seed}
	parsed, err := translate.Parse(cql)
	if err == nil {
		var plan translate.Plan
		if plan, err = translate.Prepare(parsed, t.Keyspace, schema); err == nil {
			q.Allowed = true
			if s, ok := plan.(*translate.Select); ok {
				q.Route = "reads the partitions it names"
				if s.Route == translate.RouteScan {
					q.Route = "scans every token range"
				}
			}
		}
	}
	if err != nil {
		q.Error = err.Error()
	}
	return q
}

// exampleQueries are the query shapes the seeds teach, written for t: a
// partition by its key, a slice of it by its first clustering column, the
// other order, a clustering column alone, a regular column, and a
// partition key column alone.
func exampleQueries(t *pgschema.Table) []string {
	name := pgschema.QuoteIdentifier(t.Keyspace) + "." + pgschema.QuoteIdentifier(t.Name)
	var pk []string
	for _, c := range t.PartitionKey {
		pk = append(pk, pgschema.QuoteIdentifier(c.Name)+" = ?")
	}
	byPartition := strings.Join(pk, " AND ")
	out := []string{"SELECT * FROM " + name + " WHERE " + byPartition}
	if len(t.Clustering) > 0 {
		c := pgschema.QuoteIdentifier(t.Clustering[0].Name)
		order := "ASC"
		if !t.Clustering[0].Desc {
			order = "DESC"
		}
		out = append(out,
			"SELECT * FROM "+name+" WHERE "+byPartition+" AND "+c+" > ?",
			"SELECT * FROM "+name+" WHERE "+byPartition+" ORDER BY "+c+" "+order,
			"SELECT * FROM "+name+" WHERE "+c+" = ?")
	}
	for _, c := range t.Columns {
		if c.Kind == pgschema.Regular {
			out = append(out, "SELECT * FROM "+name+" WHERE "+pgschema.QuoteIdentifier(c.Name)+" = ?")
			break
		}
	}
	if len(t.PartitionKey) > 1 {
		out = append(out, "SELECT * FROM "+name+" WHERE "+pk[0])
	}
	return out
}
